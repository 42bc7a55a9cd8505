//! `idforge`: generate, decode and compose ids from the command line (see `idforge --help`).
#![forbid(unsafe_code)]

use std::io::{BufWriter, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
    // Not locked: `serve` logs to stderr from its worker threads, which would wait on a lock
    // this thread held for ever.
    let mut err = std::io::stderr();
    let status = idforge_server::run(std::env::args_os(), &mut out, &mut err);
    // `run` flushed already; a failure here (the reader went away) has nothing left to lose.
    let _ = out.flush();
    ExitCode::from(status)
}
