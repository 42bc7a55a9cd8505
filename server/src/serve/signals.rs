//! The signals the server obeys: on Unix, SIGTERM and SIGINT end it and SIGHUP reloads the TLS
//! files; on Windows, Ctrl-C, Ctrl-Break, the console's close and the system's shutdown end it
//! (service wrappers such as WinSW and NSSM stop a process with Ctrl-C), and there is no reload
//! signal: a new certificate takes a restart.

use super::start_error::StartError;

/// What a signal asks of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asked {
    /// Stop serving, drain the connections, persist and exit; the signal's name for the log.
    Stop(&'static str),
    /// Read the TLS certificate and key again (SIGHUP; nothing asks for it on Windows).
    #[cfg_attr(not(unix), allow(dead_code))]
    Reload,
}

/// The signal streams, registered before the first connection is accepted.
#[cfg(unix)]
pub(crate) struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    /// Registers the handlers.
    pub(crate) fn new() -> Result<Signals, StartError> {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate()).map_err(StartError::Signals)?;
        let int = signal(SignalKind::interrupt()).map_err(StartError::Signals)?;
        let hup = signal(SignalKind::hangup()).map_err(StartError::Signals)?;
        Ok(Signals { term, int, hup })
    }

    /// The next signal (cancel-safe).
    pub(crate) async fn next(&mut self) -> Asked {
        tokio::select! {
            _ = self.term.recv() => Asked::Stop("SIGTERM"),
            _ = self.int.recv() => Asked::Stop("SIGINT"),
            _ = self.hup.recv() => Asked::Reload,
        }
    }
}

/// The console control events, registered before the first connection is accepted.
#[cfg(windows)]
pub(crate) struct Signals {
    c: tokio::signal::windows::CtrlC,
    brk: tokio::signal::windows::CtrlBreak,
    close: tokio::signal::windows::CtrlClose,
    shutdown: tokio::signal::windows::CtrlShutdown,
}

#[cfg(windows)]
impl Signals {
    /// Registers the handlers.
    pub(crate) fn new() -> Result<Signals, StartError> {
        use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close, ctrl_shutdown};
        Ok(Signals {
            c: ctrl_c().map_err(StartError::Signals)?,
            brk: ctrl_break().map_err(StartError::Signals)?,
            close: ctrl_close().map_err(StartError::Signals)?,
            shutdown: ctrl_shutdown().map_err(StartError::Signals)?,
        })
    }

    /// The next event (cancel-safe).
    pub(crate) async fn next(&mut self) -> Asked {
        tokio::select! {
            _ = self.c.recv() => Asked::Stop("CTRL_C"),
            _ = self.brk.recv() => Asked::Stop("CTRL_BREAK"),
            _ = self.close.recv() => Asked::Stop("CTRL_CLOSE"),
            _ = self.shutdown.recv() => Asked::Stop("CTRL_SHUTDOWN"),
        }
    }
}
