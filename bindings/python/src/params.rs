//! `DBM.Open(path, writable, **params)` to memstored's database name
//! `PATH#k=v,...`, plus the open options the engine does not take itself.

use crate::status::{Status, INVALID_ARGUMENT_ERROR};
use memstored_engine::name::with_params;
use memstored_engine::Db;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};

/// What `Open` does: the engine's name string and the binding's own options.
#[derive(Debug, PartialEq)]
pub struct OpenSpec {
    /// tkrzw-python's `truncate=True` is in it as the engine's
    /// `truncate=true`: the engine empties the files under the store's
    /// lock, so a store another process holds is refused, never emptied.
    pub name: String,
    /// tkrzw-python's `no_create=True`: fail when there is no file yet.
    pub no_create: bool,
}

impl OpenSpec {
    /// Opens the database; with `no_create` the engine's own refusal,
    /// which makes nothing and names shard files of another `num_shards`.
    pub fn open(&self, writable: bool) -> Result<Db, Status> {
        Ok(if self.no_create {
            Db::open_existing(&self.name, writable)?
        } else {
            Db::open(&self.name, writable)?
        })
    }
}

/// Keyword parameters the binding consumes instead of passing them on.
/// `concurrent` is tkrzw-python's switch to release the GIL; this binding
/// decides that per call, so the parameter is accepted and has no effect.
const BINDING_PARAMS: [&str; 2] = ["no_create", "concurrent"];

/// A keyword value as text: Python booleans as `true`/`false`, the rest by `str()`.
pub(crate) fn value_text(v: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(if b.is_true() { "true" } else { "false" }.into());
    }
    Ok(v.str()?.to_str()?.to_string())
}

fn truthy(text: &str) -> bool {
    matches!(
        text.to_ascii_lowercase().as_str(),
        "true" | "1" | "yes" | "on"
    )
}

/// Builds the name from the path and keyword parameters. `Err` carries the
/// status `Open` returns for a bad parameter.
pub fn open_spec(
    path: &str,
    params: Option<&Bound<'_, PyDict>>,
) -> PyResult<Result<OpenSpec, Status>> {
    let mut pairs = Vec::new();
    if let Some(params) = params {
        for (k, v) in params.iter() {
            pairs.push((k.str()?.to_str()?.to_string(), value_text(&v)?));
        }
    }
    Ok(build(path, &pairs))
}

fn build(path: &str, pairs: &[(String, String)]) -> Result<OpenSpec, Status> {
    let mut no_create = false;
    let mut params = Vec::with_capacity(pairs.len());
    for (k, v) in pairs {
        let (k, v) = (k.as_str(), v.as_str());
        match k {
            "no_create" => no_create = truthy(v),
            _ if BINDING_PARAMS.contains(&k) => {}
            // Python's truthy words, in the engine's.
            "truncate" => params.push((k, if truthy(v) { "true" } else { "false" })),
            _ => params.push((k, v)),
        }
    }
    let name = with_params(path, params)
        .map_err(|bad| Status::new(INVALID_ARGUMENT_ERROR, bad.to_string()))?;
    Ok(OpenSpec { name, no_create })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn params_become_the_name_and_binding_options_are_taken_out() {
        let s = build(
            "casket.tkh",
            &pairs(&[
                ("num_buckets", "100"),
                ("truncate", "true"),
                ("concurrent", "true"),
                ("num_shards", "4"),
            ]),
        )
        .unwrap();
        assert_eq!(
            s.name,
            "casket.tkh#num_buckets=100,truncate=true,num_shards=4"
        );
        assert!(!s.no_create);
        let s = build("x.tkh", &pairs(&[("truncate", "no")])).unwrap();
        assert_eq!(s.name, "x.tkh#truncate=false");
        let s = build("x.tkt#num_shards=2", &pairs(&[("sync", "always")])).unwrap();
        assert_eq!(s.name, "x.tkt#num_shards=2,sync=always");
        let e = build("*", &pairs(&[("capsiz", "1,2")])).unwrap_err();
        assert_eq!(e.code(), INVALID_ARGUMENT_ERROR);
    }
}
