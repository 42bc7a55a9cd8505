//! An etcd of a test's own: one member on loopback ports, restarted on the same data with
//! other settings, stopped by its PID on drop. Ready when its `/health` says so (plain HTTP on
//! the client port: no etcd client library here).

use std::io::{Read, Write};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A one-member etcd on 127.0.0.1.
pub struct OwnEtcd {
    child: Option<Child>,
    /// The client port.
    pub port: u16,
    peer: u16,
    dir: tempfile::TempDir,
}

impl OwnEtcd {
    /// Starts it; `None` (with a message: the test skips) where there is no etcd binary.
    pub fn start() -> Option<OwnEtcd> {
        let mut etcd = OwnEtcd {
            child: None,
            port: crate::free_port(),
            peer: crate::free_port(),
            dir: tempfile::tempdir().unwrap(),
        };
        if !etcd.run(&[]) {
            crate::skip("no etcd binary");
            return None;
        }
        Some(etcd)
    }

    /// (Re)starts it on the same data with `extra` settings, and waits until it is healthy;
    /// `false` when there is no etcd to run.
    pub fn run(&mut self, extra: &[&str]) -> bool {
        self.stop();
        let (port, peer) = (self.port, self.peer);
        let child = Command::new("etcd")
            .args(["--name", "q", "--data-dir"])
            .arg(self.dir.path().join("data"))
            .arg(format!("--listen-client-urls=http://127.0.0.1:{port}"))
            .arg(format!("--advertise-client-urls=http://127.0.0.1:{port}"))
            .arg(format!("--listen-peer-urls=http://127.0.0.1:{peer}"))
            .arg(format!(
                "--initial-advertise-peer-urls=http://127.0.0.1:{peer}"
            ))
            .arg(format!("--initial-cluster=q=http://127.0.0.1:{peer}"))
            .args(["--heartbeat-interval=50", "--election-timeout=500"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let Ok(child) = child else { return false };
        self.child = Some(child);
        crate::poll(Duration::from_secs(30), 50, "etcd did not start", || {
            self.healthy().then_some(())
        });
        true
    }

    /// Whether `GET /health` answers `"health":"true"`.
    fn healthy(&self) -> bool {
        let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        let asked = s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let mut reply = String::new();
        let _ = s.read_to_string(&mut reply);
        asked.is_ok() && reply.contains("\"health\":\"true\"")
    }

    /// `etcdctl` on this member with `args`; its output (checked by the caller).
    pub fn ctl(&self, args: &[&str]) -> Output {
        let started = Instant::now();
        let out = Command::new("etcdctl")
            .arg(format!("--endpoints=http://127.0.0.1:{}", self.port))
            .args(args)
            .output()
            .expect("etcdctl runs");
        eprintln!(
            "etcdctl {args:?}: {:?} in {:?}",
            out.status,
            started.elapsed()
        );
        out
    }

    /// Stops it (by its PID).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for OwnEtcd {
    fn drop(&mut self) {
        self.stop();
    }
}
