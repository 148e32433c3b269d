//! Building a database name from a path and `key=value` parameters, as the
//! bindings' `open(path, writable, params)` do (Tkrzw's API passes them
//! apart): `casket.tkh` with `num_shards=4` is `casket.tkh#num_shards=4`.
//! Parameters after a path that has its own go after a comma.

use std::fmt;

/// A parameter the name grammar cannot carry: its key or value holds one
/// of the separators `,` `#` `=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadParam {
    pub key: String,
    pub value: String,
}

impl fmt::Display for BadParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "parameter {}={}: names and values may not contain , # or =",
            self.key, self.value
        )
    }
}

impl std::error::Error for BadParam {}

/// Appends already joined parameters (`k=v,k=v`) to a name.
fn push(name: &mut String, params: &str) {
    name.push(if name.contains('#') { ',' } else { '#' });
    name.push_str(params);
}

/// The name of `path` with `params`, text already joined as `k=v,k=v`
/// (the C API's argument); blank text adds nothing.
pub fn with_params_text(path: &str, params: &str) -> String {
    let mut name = path.to_string();
    if !params.trim().is_empty() {
        push(&mut name, params);
    }
    name
}

/// The name of `path` with each `(key, value)` of `params`, in order. A key
/// or value holding `,` `#` or `=` is refused, since the name could not
/// say where it ends.
pub fn with_params<K: AsRef<str>, V: AsRef<str>>(
    path: &str,
    params: impl IntoIterator<Item = (K, V)>,
) -> Result<String, BadParam> {
    let mut name = path.to_string();
    for (k, v) in params {
        let (k, v) = (k.as_ref(), v.as_ref());
        if [k, v].iter().any(|s| s.contains([',', '#', '='])) {
            return Err(BadParam {
                key: k.to_string(),
                value: v.to_string(),
            });
        }
        push(&mut name, &format!("{k}={v}"));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name::DbName;

    #[test]
    fn params_join_the_path() {
        let none: [(&str, &str); 0] = [];
        assert_eq!(with_params("casket.tkh", none).unwrap(), "casket.tkh");
        assert_eq!(
            with_params(
                "casket.tkh",
                [("num_shards", "4"), ("update_mode", "in_place")]
            )
            .unwrap(),
            "casket.tkh#num_shards=4,update_mode=in_place"
        );
        assert_eq!(
            with_params("x.tkt#num_shards=2", [("sync", "always")]).unwrap(),
            "x.tkt#num_shards=2,sync=always"
        );
        assert_eq!(with_params_text("casket.tkh", " "), "casket.tkh");
        assert_eq!(
            with_params_text("casket.tkh", "truncate=true,num_buckets=100"),
            "casket.tkh#truncate=true,num_buckets=100"
        );
        assert_eq!(
            with_params_text("x.tkt#num_shards=2", "sync=always"),
            "x.tkt#num_shards=2,sync=always"
        );
    }

    #[test]
    fn separators_in_a_param_are_refused() {
        for (k, v) in [("capsiz", "1,2"), ("a#b", "1"), ("a", "b=c")] {
            let e = with_params("*", [(k, v)]).unwrap_err();
            assert_eq!((e.key.as_str(), e.value.as_str()), (k, v));
            assert_eq!(
                e.to_string(),
                format!("parameter {k}={v}: names and values may not contain , # or =")
            );
        }
    }

    #[test]
    fn the_built_name_parses_to_the_params() {
        let name = with_params("x.tkt#num_shards=2", [("num_buckets", "1000")]).unwrap();
        let n = DbName::parse(&name).unwrap();
        assert_eq!(
            (n.path.as_str(), n.num_shards, n.num_buckets),
            ("x.tkt", 2, 1000)
        );
    }
}
