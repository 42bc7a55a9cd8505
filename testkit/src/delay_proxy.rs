//! A loopback TCP proxy that holds every reply for a fixed delay: a slow allocator, for the
//! tests of segment sources and for `bench/examples/sources.rs` (which includes this file).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The proxy; it stops accepting connections when dropped (open ones run on).
pub struct DelayProxy {
    /// Where it listens (127.0.0.1).
    pub port: u16,
    stop: Arc<AtomicBool>,
}

impl DelayProxy {
    /// A proxy to `target` (`host:port`) that holds every reply for `delay`.
    pub fn start(target: &str, delay: Duration) -> DelayProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let target = target.to_owned();
        std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                let Ok((mut client, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                client.set_nonblocking(false).unwrap();
                let Ok(mut upstream) = TcpStream::connect(&target) else {
                    continue;
                };
                let mut back = upstream.try_clone().unwrap();
                let mut to_client = client.try_clone().unwrap();
                std::thread::spawn(move || std::io::copy(&mut client, &mut upstream));
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    while let Ok(n @ 1..) = back.read(&mut buf) {
                        std::thread::sleep(delay);
                        if to_client.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                });
            }
        });
        DelayProxy { port, stop }
    }
}

impl Drop for DelayProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
