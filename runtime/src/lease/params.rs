//! The lease's own parameters of a lease URL (`max_skew_ms`, `holder`, `lease_file`): read
//! here and left out of the URL the source reads.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::{CoreError, Result};

/// The URL parameter that sets the allowed skew, in ms (read here, not by the source).
pub(super) const SKEW_PARAM: &str = "max_skew_ms";

/// The URL parameter that names the holder (read here, not by the source).
const HOLDER_PARAM: &str = "holder";

/// The URL parameter that keeps the lease in a file (read here, not by the source).
const FILE_PARAM: &str = "lease_file";

/// The lease's own parameters of a lease URL (the source reads the others).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct LeaseParams {
    /// `max_skew_ms`.
    pub(crate) max_skew: Option<Duration>,
    /// `holder`.
    pub(crate) holder: Option<String>,
    /// `lease_file`.
    pub(crate) file: Option<PathBuf>,
}

/// Checks a holder's name: what a tag may be (1-128 of `A-Za-z0-9_-.:`).
pub(crate) fn validate_holder(name: &str) -> Result<()> {
    crate::source::validate_tag(name).map_err(|_| {
        CoreError::InvalidArgument(
            "a holder name is 1-128 characters of A-Za-z0-9_-.: not starting with '.'",
        )
        .into()
    })
}

/// `url` without the lease's own parameters, and their values.
pub(crate) fn split_params(url: &str) -> Result<(String, LeaseParams)> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), LeaseParams::default()));
    };
    let (mut skew, mut holder, mut file) = (None, None, None);
    let mut kept = Vec::new();
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some((HOLDER_PARAM, name)) => {
                if validate_holder(name).is_err() {
                    return Err(CoreError::InvalidUrl(
                        "holder is 1-128 characters of A-Za-z0-9_-.: not starting with '.'",
                    )
                    .into());
                }
                holder = Some(name.to_owned());
            }
            Some((FILE_PARAM, path)) => {
                if path.is_empty() {
                    return Err(CoreError::InvalidUrl("lease_file is a path").into());
                }
                file = Some(PathBuf::from(path));
            }
            Some((SKEW_PARAM, ms)) => match ms.parse::<u64>() {
                Ok(ms @ 0..=86_400_000) => skew = Some(Duration::from_millis(ms)),
                _ => {
                    return Err(CoreError::InvalidUrl(
                        "max_skew_ms is a whole number of milliseconds, 0 to 86400000",
                    )
                    .into());
                }
            },
            _ => kept.push(pair),
        }
    }
    let url = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((
        url,
        LeaseParams {
            max_skew: skew,
            holder,
            file,
        },
    ))
}
