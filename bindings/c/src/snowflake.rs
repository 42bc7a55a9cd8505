//! The snowflake generator handle: its clock policy, its configuration, and its calls.

use std::ffi::c_char;
use std::time::Duration;

use runtime::{CoreError, Policy, Snowflake, SnowflakeBuilder};

use crate::enums::idforge_snowflake_flag;
use crate::error::{FfiError, panic_boundary};
use crate::layout::{idforge_layout, idforge_parts, preset};
use crate::ptr;
use crate::status::idforge_status;

/// A clock policy: an `idforge_policy_kind` and its duration. All zero is the default.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct idforge_policy {
    /// An `idforge_policy_kind` value.
    pub kind: u32,
    /// The lead (`BORROW`) or wait budget (`WAIT`), in milliseconds.
    pub millis: u64,
}

/// Everything `idforge_snowflake_new` needs.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct idforge_snowflake_config {
    /// The layout.
    pub layout: idforge_layout,
    /// This generator's node id; must fit `layout.node_bits`.
    pub node: u64,
    /// The clock policy (zero: the default).
    pub policy: idforge_policy,
    /// NULL, or the path of a state file that keeps the high-water time across restarts, so a
    /// restart with the clock set back never repeats an id.
    pub state_file: *const c_char,
}

/// Every `idforge_snowflake_flag` bit this library knows.
const KNOWN_FLAGS: u32 = idforge_snowflake_flag::RandomStart as u32;

/// A snowflake generator. Thread-safe: share one handle between threads (every call but
/// `idforge_snowflake_free` may run concurrently). In a forked child its calls fail with
/// `IDFORGE_STATUS_FORKED` (a fixed node id would repeat the parent's ids); create a new one.
pub struct idforge_snowflake {
    inner: Snowflake,
}

impl idforge_policy {
    /// The runtime policy; an unknown kind is `INVALID_ARGUMENT`.
    pub(crate) fn to_policy(self) -> Result<Policy, FfiError> {
        // Kinds 1, 2 and 3 are the runtime's policy names in order (checked by a test).
        match self.kind {
            0 => Ok(Policy::default()),
            k => match Policy::NAMES.get(k as usize - 1) {
                Some(name) => Ok(Policy::named(
                    name,
                    Some(Duration::from_millis(self.millis)),
                )?),
                None => Err(CoreError::InvalidArgument(
                    "policy.kind must be an idforge_policy_kind",
                )
                .into()),
            },
        }
    }
}

/// Creates a generator from `config`; free it with `idforge_snowflake_free`.
///
/// Fails with `INVALID_LAYOUT`, `NODE_OUT_OF_RANGE`, `EPOCH_IN_FUTURE`, `INVALID_ARGUMENT` (bad
/// policy kind) or `IO` (state file).
///
/// # Safety
/// `config` is NULL or readable, its `state_file` NULL or NUL-terminated; `out` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_new(
    config: *const idforge_snowflake_config,
    out: *mut *mut idforge_snowflake,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { idforge_snowflake_new_with_flags(config, 0, out) }
}

/// `idforge_snowflake_new` with options: `flags` is 0 or a sum of `idforge_snowflake_flag`
/// values (`IDFORGE_SNOWFLAKE_FLAG_RANDOM_START`); a bit this library does not know is
/// `INVALID_ARGUMENT`, so a program built for a newer library fails rather than silently
/// losing an option.
///
/// # Safety
/// `config` is NULL or readable, its `state_file` NULL or NUL-terminated; `out` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_new_with_flags(
    config: *const idforge_snowflake_config,
    flags: u32,
    out: *mut *mut idforge_snowflake,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (config, out) = unsafe { (ptr::get(config, "config")?, ptr::out(out, "out")?) };
        // SAFETY: the caller's guarantees on `config`.
        let inner = unsafe { builder(config, flags) }?.build()?;
        out.write(ptr::into_handle(idforge_snowflake { inner }));
        Ok(())
    })
}

/// The builder of `config` (its node, policy and state file) and `flags`.
///
/// # Safety
/// `config.state_file` is NULL or NUL-terminated.
unsafe fn builder(
    config: &idforge_snowflake_config,
    flags: u32,
) -> Result<SnowflakeBuilder, FfiError> {
    if flags & !KNOWN_FLAGS != 0 {
        return Err(CoreError::InvalidArgument("unknown idforge_snowflake_flag bits").into());
    }
    let mut builder = Snowflake::builder(config.layout.to_layout()?)
        .node(config.node)
        .policy(config.policy.to_policy()?)
        .random_start(flags & idforge_snowflake_flag::RandomStart as u32 != 0);
    if !config.state_file.is_null() {
        // SAFETY: non-NULL, and the caller guarantees it is NUL-terminated.
        let path = unsafe { ptr::cstr(config.state_file, "config.state_file") }?;
        builder = builder.state_file(ptr::path(path)?);
    }
    Ok(builder)
}

/// Creates a generator whose node id is leased from an idforge server (`IDF.WORKER`): the
/// lowest id of `service` that no live process holds, renewed in the background every third of
/// `ttl_ms` (0: 10 000) and released by `idforge_snowflake_free`. `config.node` is ignored;
/// `idforge_snowflake_node` tells the id leased. If the lease is lost or cannot be renewed in
/// time, every call fails with `IDFORGE_STATUS_LEASE_LOST`: create a new generator.
///
/// `url` is `idforge://[user:pass@]host:port[,host:port…]`. Fails like `idforge_snowflake_new`,
/// and with `INVALID_URL`, `SOURCE_UNAVAILABLE` (no server answered), `OVERFLOW` (every id of
/// the service is held) or `INVALID_ARGUMENT` (a bad service name or TTL).
///
/// # Safety
/// `config` is NULL or readable, its `state_file` NULL or NUL-terminated; `url` and `service`
/// are NULL or NUL-terminated; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_new_leased(
    config: *const idforge_snowflake_config,
    url: *const c_char,
    service: *const c_char,
    ttl_ms: u32,
    out: *mut *mut idforge_snowflake,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { idforge_snowflake_new_leased_with_flags(config, 0, url, service, ttl_ms, out) }
}

/// `idforge_snowflake_new_leased` with `flags` as in `idforge_snowflake_new_with_flags`.
///
/// # Safety
/// As `idforge_snowflake_new_leased`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_new_leased_with_flags(
    config: *const idforge_snowflake_config,
    flags: u32,
    url: *const c_char,
    service: *const c_char,
    ttl_ms: u32,
    out: *mut *mut idforge_snowflake,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (config, url, service, out) = unsafe {
            (
                ptr::get(config, "config")?,
                ptr::cstr(url, "url")?,
                ptr::cstr(service, "service")?,
                ptr::out(out, "out")?,
            )
        };
        let text = |s: &std::ffi::CStr, what: &'static str| {
            s.to_str()
                .map(str::to_owned)
                .map_err(|_| FfiError::from(CoreError::InvalidArgument(what)))
        };
        let ttl = match ttl_ms {
            0 => runtime::DEFAULT_LEASE_TTL,
            ms => Duration::from_millis(u64::from(ms)),
        };
        // SAFETY: the caller's guarantees on `config`.
        let inner = unsafe { builder(config, flags) }?
            .lease(
                text(url, "url is not UTF-8")?,
                text(service, "service is not UTF-8")?,
            )
            .lease_ttl(ttl)
            .build()?;
        out.write(ptr::into_handle(idforge_snowflake { inner }));
        Ok(())
    })
}

/// Writes the generator's node id to `out_node` (for a leased generator, the id leased).
///
/// # Safety
/// `handle` is NULL or a live generator; `out_node` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_node(
    handle: *const idforge_snowflake,
    out_node: *mut u64,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe {
        ptr::answer(handle, out_node, ("handle", "out_node"), |h| {
            Ok(h.inner.node())
        })
    }
}

/// Whether the generator starts each tick's sequence at a random value
/// (`IDFORGE_SNOWFLAKE_FLAG_RANDOM_START`), into `*out`.
///
/// # Safety
/// `handle` is NULL or a live generator; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_random_start(
    handle: *const idforge_snowflake,
    out: *mut bool,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe {
        ptr::answer(handle, out, ("handle", "out"), |h| {
            Ok(h.inner.random_start())
        })
    }
}

/// Creates a generator for a preset (an `idforge_preset`) and node id, with the default policy.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_new_preset(
    preset_id: u32,
    node: u64,
    out: *mut *mut idforge_snowflake,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantee.
        let out = unsafe { ptr::out(out, "out") }?;
        let inner = Snowflake::new(preset(preset_id)?, node)?;
        out.write(ptr::into_handle(idforge_snowflake { inner }));
        Ok(())
    })
}

/// Frees a generator; NULL is ignored. No other call may use the handle during or after this.
///
/// # Safety
/// `handle` is NULL or came from `idforge_snowflake_new*` and is not freed twice.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_free(handle: *mut idforge_snowflake) {
    // Dropping a Snowflake cannot panic (plain data and an optional file handle).
    // SAFETY: the caller's guarantee.
    unsafe { ptr::free_handle(handle) }
}

/// The next id, into `*out_id`. Thread-safe.
///
/// # Safety
/// `handle` is NULL or a live generator; `out_id` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_next(
    handle: *const idforge_snowflake,
    out_id: *mut u64,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe {
        ptr::answer(handle, out_id, ("handle", "out_id"), |h| {
            Ok(h.inner.next()?)
        })
    }
}

/// Fills `out[0..len]` with fresh ids in increasing order (one clock read per run of ids that
/// share a tick). Thread-safe. On failure the contents of `out` are unspecified: some may have
/// been written, and those ids are never issued again.
///
/// # Safety
/// `handle` is NULL or a live generator; `out` is NULL or points to `len` writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_next_many(
    handle: *const idforge_snowflake,
    out: *mut u64,
    len: usize,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (h, out) = unsafe {
            (
                ptr::get(handle, "handle")?,
                ptr::out_slice(out, len, "out")?,
            )
        };
        h.inner.next_many(out)?;
        Ok(())
    })
}

/// Splits an id of this generator's layout into its fields.
///
/// # Safety
/// `handle` is NULL or a live generator; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_decode(
    handle: *const idforge_snowflake,
    id: u64,
    out: *mut idforge_parts,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe {
        ptr::answer(handle, out, ("handle", "out"), |h| {
            Ok(idforge_parts::of(h.inner.decode(id)?))
        })
    }
}

/// The generator's layout, into `*out`.
///
/// # Safety
/// `handle` is NULL or a live generator; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_layout(
    handle: *const idforge_snowflake,
    out: *mut idforge_layout,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe {
        ptr::answer(handle, out, ("handle", "out"), |h| {
            Ok(idforge_layout::of(h.inner.layout()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enums::idforge_policy_kind;

    #[test]
    fn policy_kinds_are_the_runtime_names_in_order() {
        let kinds = [
            (idforge_policy_kind::Borrow as u32, "borrow"),
            (idforge_policy_kind::Wait as u32, "wait"),
            (idforge_policy_kind::Error as u32, "error"),
        ];
        for (kind, name) in kinds {
            let policy = idforge_policy { kind, millis: 7 }.to_policy().unwrap();
            assert_eq!(policy.name(), name);
        }
        let default = idforge_policy { kind: 0, millis: 7 }.to_policy().unwrap();
        assert_eq!(default, Policy::default());
        assert!(idforge_policy { kind: 4, millis: 0 }.to_policy().is_err());
    }
}
