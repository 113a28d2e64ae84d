//! The process metrics of a node, read from `/proc/self` at each scrape
//! (Linux; elsewhere none), under the names Prometheus's client libraries
//! give them: `process_resident_memory_bytes`, `process_open_fds`,
//! `process_cpu_seconds_total`.

use std::fmt::Write as _;

/// What `/proc/self` says of the process.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProcessStats {
    /// Resident memory (`VmRSS` of `/proc/self/status`), in bytes.
    pub resident_bytes: u64,
    /// Open file descriptors (entries of `/proc/self/fd`).
    pub open_fds: u64,
    /// User and system CPU time (`utime` + `stime` of `/proc/self/stat`),
    /// in seconds.
    pub cpu_seconds: f64,
}

impl ProcessStats {
    /// Reads them; `None` where `/proc/self` cannot be read or parsed.
    pub fn read() -> Option<Self> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        let open_fds = std::fs::read_dir("/proc/self/fd").ok()?.count() as u64;
        Some(ProcessStats {
            resident_bytes: resident_kib(&status)? * 1024,
            open_fds,
            cpu_seconds: cpu_ticks(&stat)? as f64 / rustix::param::clock_ticks_per_second() as f64,
        })
    }

    /// Appends them to `out` in the Prometheus text format.
    pub fn render(&self, out: &mut String) {
        let _ = write!(
            out,
            "# HELP process_resident_memory_bytes Resident memory size in bytes.\n\
             # TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes {}\n\
             # HELP process_open_fds Number of open file descriptors.\n\
             # TYPE process_open_fds gauge\nprocess_open_fds {}\n\
             # HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n\
             # TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total {}\n",
            self.resident_bytes, self.open_fds, self.cpu_seconds
        );
    }
}

/// `VmRSS` of a `/proc/PID/status` text, in KiB.
fn resident_kib(status: &str) -> Option<u64> {
    let line = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
    line.split_whitespace().next()?.parse().ok()
}

/// `utime + stime` of a `/proc/PID/stat` line, in clock ticks: fields 14
/// and 15, counted after the command name, which is in parentheses and may
/// hold spaces and parentheses itself.
fn cpu_ticks(stat: &str) -> Option<u64> {
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(user + system)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_status_and_stat() {
        assert_eq!(resident_kib("Name:\tmds\nVmPeak:\t  900 kB\nVmRSS:\t   51200 kB\n"), Some(51200));
        assert_eq!(resident_kib("Name:\tmds\n"), None);
        // A command name with a space and a parenthesis in it.
        let stat = "4242 (mds (a) b) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 70 0 0 20 0 9 0 100 0";
        assert_eq!(cpu_ticks(stat), Some(320));
        assert_eq!(cpu_ticks("4242 (mds) S 1"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn reads_this_process() {
        let before = ProcessStats::read().expect("/proc/self");
        assert!(before.resident_bytes > 1 << 20, "{before:?}");
        // Standard input, output, error, and the directory being read.
        assert!(before.open_fds >= 4, "{before:?}");
        // Burn some CPU: the counter moves (ticks are 10 ms).
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed() < std::time::Duration::from_millis(100) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let after = ProcessStats::read().unwrap();
        assert!(after.cpu_seconds > before.cpu_seconds, "{before:?} {after:?}");
        let mut text = String::new();
        after.render(&mut text);
        assert!(text.contains("\nprocess_open_fds "), "{text}");
    }
}
