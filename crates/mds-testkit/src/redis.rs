//! A private `redis-server` on a free loopback port, for tests that stop,
//! kill or restart Redis (real faults) without disturbing other tests:
//! `SIGSTOP` and `SIGCONT` pause it as a stalled host would, with its data
//! kept.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` child, killed on drop.
pub struct RedisServer {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl RedisServer {
    /// Starts one on a free port; `None` (the test says it is skipped) when
    /// `redis-server` is not installed.
    pub fn start() -> Option<RedisServer> {
        let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        Self::start_on(port)
    }

    /// Starts one on `port` (a restart on the same address).
    pub fn start_on(port: u16) -> Option<RedisServer> {
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let server = RedisServer { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(server);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    /// `redis://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Sends `signal` (`STOP`, `CONT`) to the server.
    pub fn signal(&self, signal: &str) {
        let ok = Command::new("kill").args([&format!("-{signal}"), &self.child.id().to_string()]).status().unwrap();
        assert!(ok.success(), "kill -{signal}");
    }

    /// `redis-cli` against it; its trimmed output.
    pub fn cli(&self, args: &[&str]) -> String {
        let o = Command::new("redis-cli").args(["-p", &self.port.to_string()]).args(args).output().unwrap();
        assert!(o.status.success(), "redis-cli {args:?}");
        String::from_utf8_lossy(&o.stdout).trim().to_owned()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
