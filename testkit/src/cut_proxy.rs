//! A TCP proxy to a real database that cuts connections on command: at a `COMMIT` (before the
//! database sees it, or after it did and before its answer comes back), or at every request.
//! For proving that a write whose outcome the server never learnt is never served twice.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::Duration;

/// What the proxy does to the traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// Passes everything.
    Off,
    /// Cuts a connection when it sends `COMMIT`, which never reaches the database.
    BeforeCommit,
    /// Lets `COMMIT` through, then cuts the connection before the answer: committed, and the
    /// client cannot know.
    AfterCommit,
    /// Lets each request through and cuts the connection before its answer.
    Every,
    /// Cuts each connection at its first request, which never reaches the server: a network
    /// cut between one client and a server others still reach.
    Blackhole,
}

impl Cut {
    /// Every mode, indexed by its number (`Cut as u8`, the proxy's atomic).
    const ALL: [Cut; 5] = [
        Cut::Off,
        Cut::BeforeCommit,
        Cut::AfterCommit,
        Cut::Every,
        Cut::Blackhole,
    ];
}

/// The proxy; stops accepting when dropped.
pub struct CutProxy {
    /// Where it listens (127.0.0.1).
    pub port: u16,
    mode: Arc<AtomicU8>,
    stop: Arc<AtomicBool>,
}

impl CutProxy {
    /// A proxy to 127.0.0.1:`target`, passing everything until told otherwise.
    pub fn start(target: u16) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let mode = Arc::new(AtomicU8::new(Cut::Off as u8));
        let stop = Arc::new(AtomicBool::new(false));
        let (m, s) = (mode.clone(), stop.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).unwrap();
                        if let Ok(server) = TcpStream::connect(("127.0.0.1", target)) {
                            relay(client, server, m.clone());
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        CutProxy { port, mode, stop }
    }

    /// From now on, does `cut`.
    pub fn set(&self, cut: Cut) {
        self.mode.store(cut as u8, Ordering::Relaxed);
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Pumps both ways; the client's side decides the cuts.
fn relay(client: TcpStream, server: TcpStream, mode: Arc<AtomicU8>) {
    // Set before a cut request is passed on: its answer is then dropped, never relayed.
    let dead = Arc::new(AtomicBool::new(false));
    let (mut from_client, mut to_server) =
        (client.try_clone().unwrap(), server.try_clone().unwrap());
    let (mut from_server, mut to_client) = (server, client);
    let d = dead.clone();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n @ 1..) = from_server.read(&mut buf) {
            if d.load(Ordering::SeqCst) || to_client.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to_client.shutdown(Shutdown::Both);
        let _ = from_server.shutdown(Shutdown::Both);
    });
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n @ 1..) = from_client.read(&mut buf) {
            let chunk = &buf[..n];
            let commit = contains(chunk, b"COMMIT");
            // Some(pass_on): cut the connection, after passing the request on or not.
            let cut = match (Cut::ALL[usize::from(mode.load(Ordering::Relaxed))], commit) {
                (Cut::BeforeCommit, true) | (Cut::Blackhole, _) => Some(false),
                (Cut::AfterCommit, true) | (Cut::Every, _) => Some(true),
                _ => None,
            };
            match cut {
                None => {
                    if to_server.write_all(chunk).is_err() {
                        break;
                    }
                }
                Some(pass_on) => {
                    dead.store(true, Ordering::SeqCst);
                    if pass_on {
                        let _ = to_server.write_all(chunk);
                        // Time for the database to act on it.
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    break;
                }
            }
        }
        let _ = to_server.shutdown(Shutdown::Both);
        let _ = from_client.shutdown(Shutdown::Both);
    });
}
