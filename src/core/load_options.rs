//! Module load arguments (`loadmodule librl.so [NAME value ...]`), parsed
//! before anything is registered. Unknown or malformed arguments fail the
//! load: a typo must not silently leave a setting at its default.

use std::fmt;

use super::error::token_text;

/// The module's load-time settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadOptions {
    /// Register `CL.THROTTLE`, the redis-cell compatible name. `CL.THROTTLE
    /// off` leaves it to redis-cell when both modules are loaded.
    pub cl_throttle: bool,
    /// Fire the keyspace event `rl.denied` (class `d`, module events) on the
    /// key of every denied request. Off by default: it costs a publish per
    /// denial when someone subscribes.
    pub notify_denied: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            cl_throttle: true,
            notify_denied: false,
        }
    }
}

/// Why the load arguments were refused; the text goes to the server log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    UnknownArgument(String),
    MissingValue { name: &'static str },
    BadSwitch { name: &'static str, value: String },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::UnknownArgument(token) => write!(
                f,
                "unknown load argument '{token}' (rl takes: CL.THROTTLE on|off, NOTIFY-DENIED on|off)"
            ),
            LoadError::MissingValue { name } => {
                write!(f, "load argument {name} needs a value: on or off")
            }
            LoadError::BadSwitch { name, value } => {
                write!(f, "load argument {name} must be on or off, not '{value}'")
            }
        }
    }
}

impl std::error::Error for LoadError {}

impl LoadOptions {
    /// Parses `NAME value` pairs; names and values are case-insensitive and a
    /// later pair overrides an earlier one.
    pub fn parse(args: &[&[u8]]) -> Result<Self, LoadError> {
        let mut options = LoadOptions::default();
        let mut at = 0;
        while at < args.len() {
            let token = args[at];
            let (name, slot) = if token.eq_ignore_ascii_case(b"CL.THROTTLE") {
                ("CL.THROTTLE", &mut options.cl_throttle)
            } else if token.eq_ignore_ascii_case(b"NOTIFY-DENIED") {
                ("NOTIFY-DENIED", &mut options.notify_denied)
            } else {
                return Err(LoadError::UnknownArgument(token_text(token)));
            };
            let value = args.get(at + 1).ok_or(LoadError::MissingValue { name })?;
            *slot = switch(value, name)?;
            at += 2;
        }
        Ok(options)
    }

    /// Whether the command named `name` (lower case, as declared) is
    /// registered under these options.
    pub fn registers(&self, name: &str) -> bool {
        name != "cl.throttle" || self.cl_throttle
    }
}

fn switch(value: &[u8], name: &'static str) -> Result<bool, LoadError> {
    if value.eq_ignore_ascii_case(b"on") {
        Ok(true)
    } else if value.eq_ignore_ascii_case(b"off") {
        Ok(false)
    } else {
        Err(LoadError::BadSwitch {
            name,
            value: token_text(value),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<LoadOptions, LoadError> {
        let args: Vec<&[u8]> = line.split_whitespace().map(str::as_bytes).collect();
        LoadOptions::parse(&args)
    }

    #[test]
    fn arguments_and_their_effect() {
        let on = LoadOptions::default();
        let off = LoadOptions {
            cl_throttle: false,
            ..on
        };
        let notify = LoadOptions {
            notify_denied: true,
            ..on
        };
        let cases = [
            ("", Ok(on)),
            ("CL.THROTTLE off", Ok(off)),
            ("cl.throttle OFF", Ok(off)),
            ("CL.THROTTLE on", Ok(on)),
            ("CL.THROTTLE off CL.THROTTLE on", Ok(on)),
            ("NOTIFY-DENIED on", Ok(notify)),
            ("notify-denied ON CL.THROTTLE on", Ok(notify)),
            (
                "NOTIFY-DENIED off CL.THROTTLE off",
                Ok(LoadOptions {
                    notify_denied: false,
                    ..off
                }),
            ),
            (
                "NOTIFY-DENIED",
                Err(LoadError::MissingValue {
                    name: "NOTIFY-DENIED",
                }),
            ),
            (
                "no-cl-throttle",
                Err(LoadError::UnknownArgument("no-cl-throttle".into())),
            ),
            (
                "CL.THROTTLE",
                Err(LoadError::MissingValue {
                    name: "CL.THROTTLE",
                }),
            ),
            (
                "CL.THROTTLE no",
                Err(LoadError::BadSwitch {
                    name: "CL.THROTTLE",
                    value: "no".into(),
                }),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(parse(line), want, "{line:?}");
        }
        assert!(on.registers("cl.throttle"));
        assert!(!off.registers("cl.throttle"));
        assert!(off.registers("rl.throttle"));
        assert!(off.registers("rl.slide"));
    }

    #[test]
    fn each_error_has_its_log_text() {
        let cases = [
            (
                LoadError::UnknownArgument("x".into()),
                "unknown load argument 'x' (rl takes: CL.THROTTLE on|off, NOTIFY-DENIED on|off)",
            ),
            (
                LoadError::MissingValue {
                    name: "CL.THROTTLE",
                },
                "load argument CL.THROTTLE needs a value: on or off",
            ),
            (
                LoadError::BadSwitch {
                    name: "CL.THROTTLE",
                    value: "1".into(),
                },
                "load argument CL.THROTTLE must be on or off, not '1'",
            ),
        ];
        for (err, text) in cases {
            assert_eq!(err.to_string(), text);
        }
    }
}
