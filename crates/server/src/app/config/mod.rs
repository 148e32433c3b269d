//! `--config FILE`: every flag of `memstored` in a TOML file.
//!
//! A key is a flag's long name and its value what the flag takes:
//!
//! ```toml
//! store = ["/var/lib/memstored/casket.tkh#num_shards=8"]
//! listen = "0.0.0.0:11211"
//! max-connections = 4096
//! read-only = false
//! verbose = 1
//! ```
//!
//! The file is not given a schema of its own: it is turned into the flags
//! it stands for, and those go through the same clap definition as the
//! command line. So a key means exactly what its flag means, is checked by
//! the same parser, and a flag added to [`Args`] is a config key at once,
//! with nothing to keep in step. A flag also given on the command line wins
//! over the file, the way an operator expects to override one setting of a
//! packaged config for a single run. `--print-config` writes the settings in
//! effect back out as such a file.

use crate::app::cli::Args;
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, CommandFactory, FromArgMatches};
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Flags that make no sense inside a config file.
const NOT_IN_FILE: &[&str] = &["config", "print-config", "help", "version"];

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The command line itself (or `--help`/`--version`): clap prints it.
    #[error(transparent)]
    CommandLine(#[from] clap::Error),
    #[error("cannot read config file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {}: {source}", path.display())]
    Syntax {
        path: PathBuf,
        source: toml::de::Error,
    },
    #[error("config file {}: unknown key {key:?}{hint}; the keys are memstored's long flag names (memstored --help)", path.display())]
    UnknownKey {
        path: PathBuf,
        key: String,
        /// "; did you mean ...?" when a key is close, else empty.
        hint: String,
    },
    #[error("config file {}: key {key:?}: {why}", path.display())]
    BadValue {
        path: PathBuf,
        key: String,
        why: String,
    },
    /// The flags the file stands for were refused by the flag parser: the
    /// same words the flag would get on the command line (bounds included).
    #[error("config file {}: {}", path.display(), flag_message(source))]
    Flags { path: PathBuf, source: clap::Error },
}

/// What clap says of a refused flag, on one line without its `error: `
/// prefix and the usage that follows.
pub fn flag_message(e: &clap::Error) -> String {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

/// The command line parsed, with the config file it names merged in.
pub struct Loaded {
    pub args: Args,
    pub matches: ArgMatches,
}

/// Parses `argv` (program name first), reading `--config FILE` if given.
pub fn load<I, T>(argv: I) -> Result<Loaded, ConfigError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let argv: Vec<OsString> = argv.into_iter().map(Into::into).collect();
    let command = Args::command();
    let given = command.clone().try_get_matches_from(&argv)?;
    let Some(path) = given.get_one::<PathBuf>("config").cloned() else {
        let mut args = Args::from_arg_matches(&given)?;
        args.listen_given = given.value_source("listen") == Some(ValueSource::CommandLine);
        crate::app::tkrzw_fold::fold(&mut args);
        return Ok(Loaded {
            args,
            matches: given,
        });
    };
    let mut merged: Vec<OsString> = argv.first().cloned().into_iter().collect();
    merged.extend(file_flags(&path, &command, &given)?);
    merged.extend(argv.iter().skip(1).cloned());
    let matches = command
        .try_get_matches_from(&merged)
        .map_err(|source| ConfigError::Flags {
            path: path.clone(),
            source,
        })?;
    let mut args = Args::from_arg_matches(&matches)?;
    args.listen_given = matches.value_source("listen") == Some(ValueSource::CommandLine);
    crate::app::tkrzw_fold::fold(&mut args);
    Ok(Loaded { args, matches })
}

/// The flags a config file stands for, minus those the command line gives.
fn file_flags(
    path: &Path,
    command: &clap::Command,
    given: &ArgMatches,
) -> Result<Vec<OsString>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_owned(),
        source,
    })?;
    let table: toml::Table = text.parse().map_err(|source| ConfigError::Syntax {
        path: path.to_owned(),
        source,
    })?;
    let on_command_line = |id: &str| given.value_source(id) == Some(ValueSource::CommandLine);
    let mut flags = Vec::new();
    for (key, value) in &table {
        let Some(arg) = file_arg(command, key) else {
            let keys = file_args(command).flat_map(arg_names);
            return Err(ConfigError::UnknownKey {
                path: path.to_owned(),
                key: key.clone(),
                hint: memstored_engine::name::closest(key, keys)
                    .map(|k| format!("; did you mean {k:?}?"))
                    .unwrap_or_default(),
            });
        };
        let id = arg.get_id().as_str();
        // Database names given on the command line, as `-s` or positional,
        // replace the file's list rather than adding to it.
        if on_command_line(id) || (id == "store" && on_command_line("names")) {
            continue;
        }
        let bad = |why: &str| ConfigError::BadValue {
            path: path.to_owned(),
            key: key.clone(),
            why: why.to_string(),
        };
        let flag = format!("--{key}");
        match arg.get_action() {
            ArgAction::SetTrue => match value.as_bool() {
                Some(true) => flags.push(OsString::from(&flag)),
                Some(false) => {}
                None => return Err(bad("expected true or false")),
            },
            ArgAction::Count => match value.as_integer().map(u8::try_from) {
                Some(Ok(n)) => flags.extend((0..n).map(|_| OsString::from(&flag))),
                _ => return Err(bad("expected a small whole number")),
            },
            ArgAction::Append => {
                let items: Vec<&toml::Value> = match value.as_array() {
                    Some(items) => items.iter().collect(),
                    None => vec![value],
                };
                for item in items {
                    let v = scalar(item)
                        .ok_or_else(|| bad("expected a string or a list of strings"))?;
                    flags.push(format!("{flag}={v}").into());
                }
            }
            _ => {
                let v = scalar(value).ok_or_else(|| bad("expected a single string or number"))?;
                flags.push(format!("{flag}={v}").into());
            }
        }
    }
    Ok(flags)
}

/// A string, integer or float as the text its flag would take.
fn scalar(value: &toml::Value) -> Option<String> {
    match value {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(n) => Some(n.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        _ => None,
    }
}

/// The flags a config file may set: those with a long name.
fn file_args(command: &clap::Command) -> impl Iterator<Item = &Arg> {
    command
        .get_arguments()
        .filter(|a| a.get_long().is_some_and(|l| !NOT_IN_FILE.contains(&l)))
}

/// A flag's long name and its aliases, hidden ones included: a config
/// file written before a flag was renamed keeps working, as its command
/// line does.
fn arg_names(arg: &Arg) -> impl Iterator<Item = &str> {
    arg.get_long()
        .into_iter()
        .chain(arg.get_all_aliases().into_iter().flatten())
}

fn file_arg<'a>(command: &'a clap::Command, key: &str) -> Option<&'a Arg> {
    file_args(command).find(|a| arg_names(a).any(|n| n == key))
}

/// The settings in effect as a config file: every key, with its flag's
/// help as a comment; unset options are written commented out.
pub fn render(loaded: &Loaded) -> String {
    let command = Args::command();
    let mut out = String::from("# memstored settings (memstored --print-config)\n");
    for arg in file_args(&command) {
        let (Some(long), id) = (arg.get_long(), arg.get_id().as_str()) else {
            continue;
        };
        // Folded into `listen` and `store` below, which say it all; and
        // tkrzw_server's spellings, folded into memstored's (`grpc-listen`,
        // `server-id`, ...).
        if matches!(id, "port" | "memory_limit") || crate::app::tkrzw_fold::FOLDED.contains(&id) {
            continue;
        }
        if let Some(help) = arg.get_help() {
            let _ = writeln!(out, "\n# {help}");
        }
        let twin = crate::app::tkrzw_fold::twin_value(&loaded.args, id);
        let value = match arg.get_action() {
            _ if twin.is_some() => twin,
            _ if id == "listen" => {
                let settled = loaded.args.listen.settled(loaded.args.port);
                Some(toml::Value::String(settled.to_string()))
            }
            // With the tkrzw_server way's default folded in.
            _ if id == "grpc_listen" => loaded
                .args
                .grpc_listen
                .map(|a| toml::Value::String(a.to_string())),
            ArgAction::SetTrue => Some(toml::Value::Boolean(loaded.matches.get_flag(id))),
            ArgAction::Count => Some(toml::Value::Integer(i64::from(
                loaded.matches.get_count(id),
            ))),
            _ if id == "store" => Some(toml::Value::Array(
                loaded
                    .args
                    .stores()
                    .into_iter()
                    .map(toml::Value::String)
                    .collect(),
            )),
            action => loaded.matches.get_raw(id).map(|raw| {
                let items: Vec<toml::Value> = raw.map(|v| typed(&v.to_string_lossy())).collect();
                match (action, <[_; 1]>::try_from(items)) {
                    (ArgAction::Append, Ok([one])) => toml::Value::Array(vec![one]),
                    (_, Ok([one])) => one,
                    (_, Err(many)) => toml::Value::Array(many),
                }
            }),
        };
        match value {
            Some(v) => {
                let _ = writeln!(out, "{long} = {v}");
            }
            None => {
                let _ = writeln!(out, "# {long} = (not set)");
            }
        }
    }
    out
}

/// A number where the flag's text is one, so the file reads naturally.
fn typed(text: &str) -> toml::Value {
    match text.parse::<i64>() {
        Ok(n) => toml::Value::Integer(n),
        Err(_) => toml::Value::String(text.to_string()),
    }
}

#[cfg(test)]
mod tests;
