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
    ///
    /// The port is free when chosen, but another test's socket may take it
    /// before `redis-server` binds it: that server then exits, and another
    /// is started on a new port (5 tries).
    pub fn start() -> Option<RedisServer> {
        for _ in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
            match Self::launch(port) {
                Launch::Up(server) => return Some(server),
                Launch::Missing => return None,
                Launch::Exited => continue,
            }
        }
        panic!("redis-server exited at start on 5 free ports in a row");
    }

    /// Starts one on `port` (a restart on the same address).
    pub fn start_on(port: u16) -> Option<RedisServer> {
        match Self::launch(port) {
            Launch::Up(server) => Some(server),
            Launch::Missing | Launch::Exited => None,
        }
    }

    /// Spawns `redis-server` on `port` and waits up to 10 s for it to
    /// answer `PING` (not just any listener there: one that took the port
    /// would accept a connection too).
    fn launch(port: u16) -> Launch {
        let Ok(child) = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        else {
            return Launch::Missing;
        };
        let mut server = RedisServer { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if pong(port) {
                return Launch::Up(server);
            }
            if server.child.try_wait().ok().flatten().is_some() {
                return Launch::Exited;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Launch::Missing
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

/// What [`RedisServer::launch`] came to.
enum Launch {
    /// It answers `PING`.
    Up(RedisServer),
    /// It could not be spawned, or did not answer in time.
    Missing,
    /// It exited (its port was taken).
    Exited,
}

/// Whether a Redis server answers `PING` on `port`.
fn pong(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let mut reply = [0u8; 7];
    stream.write_all(b"PING\r\n").is_ok() && stream.read_exact(&mut reply).is_ok() && &reply == b"+PONG\r\n"
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
