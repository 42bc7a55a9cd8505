//! A loopback peer that plays a server: a test gives what it does with each connection (answer,
//! stall, answer wrong), and the peer accepts until told to stop.

use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Listens on 127.0.0.1 and runs `serve(connection, own port)` on a thread of its own for each
/// connection (blocking), until `stop` is set: at most 60 s, so a test's peer never outlives it.
/// Returns the port.
pub fn loopback_peer(
    stop: Arc<AtomicBool>,
    serve: impl Fn(TcpStream, u16) + Send + Sync + 'static,
) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Non-blocking accepts, so the loop sees `stop` between connections.
    listener.set_nonblocking(true).unwrap();
    let serve = Arc::new(serve);
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
            let Ok((stream, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            stream.set_nonblocking(false).unwrap();
            let serve = serve.clone();
            std::thread::spawn(move || serve(stream, port));
        }
    });
    port
}
