//! A command's syntax, declared once next to its parser: its name and its
//! arguments. The server shows it in `COMMAND DOCS` (and derives the arity
//! from it); the parser takes its argument count, option tokens and the
//! name its errors give from it; tests check that the parser's argument
//! names and the README's usage lines agree with it.

use std::ffi::CStr;

use super::error::RlError;

/// The token of `WAIT timeout_ms` ([`crate::core::options::wait`]): no
/// limiter's parser reads it as an option; the host takes it off first.
pub const WAIT_TOKEN: &str = "WAIT";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    Key,
    Integer,
    String,
    /// One or more keys.
    Keys,
    /// One or more strings.
    Strings,
    /// A token alone, without a value (`OLDEST`).
    Flag,
}

/// One argument, in command-line order after the command name.
#[derive(Debug, Clone, Copy)]
pub struct ArgSpec {
    pub name: &'static CStr,
    pub kind: ArgKind,
    /// The option token that precedes the value (`COST`), if any.
    pub token: Option<&'static CStr>,
    pub optional: bool,
}

impl ArgSpec {
    fn multiple(&self) -> bool {
        matches!(self.kind, ArgKind::Keys | ArgKind::Strings)
    }

    /// The option token as text (declared tokens are ASCII).
    fn token_str(&self) -> Option<&'static str> {
        self.token.and_then(|t| t.to_str().ok())
    }
}

/// A command: its name and its arguments after the name.
#[derive(Debug, Clone, Copy)]
pub struct Syntax {
    /// Lower-case, as the server registers it and errors name it.
    pub command: &'static CStr,
    pub args: &'static [ArgSpec],
}

impl Syntax {
    /// The command name as text (declared names are ASCII).
    pub fn name(&self) -> &'static str {
        self.command.to_str().unwrap_or("rl")
    }

    /// Arguments a call needs at least, the command name included. A
    /// `const fn`, so a command can name its plain line's length as a
    /// constant (see `commands::slide`).
    #[inline(always)]
    pub const fn min_args(&self) -> usize {
        let mut n = 1;
        let mut i = 0;
        while i < self.args.len() {
            if !self.args[i].optional {
                n += 1;
            }
            i += 1;
        }
        n
    }

    /// The server's arity: the exact count, or minus the minimum when
    /// optional or repeated arguments make the count vary.
    pub fn arity(&self) -> i32 {
        let n = self.min_args() as i32;
        if self.args.iter().any(|a| a.optional || a.multiple()) {
            -n
        } else {
            n
        }
    }

    /// Refuses a call of `len` arguments (name included) that the command
    /// cannot spell: too few, or more than its positional arguments when it
    /// has no options or repeated arguments to take the rest. Inlined: over
    /// a command's constant declaration the counts fold to constants.
    #[inline(always)]
    pub fn check_count(&self, len: usize) -> Result<(), RlError> {
        let open_ended = self.args.iter().any(|a| a.token.is_some() || a.multiple());
        if len < self.min_args() || (!open_ended && len > 1 + self.args.len()) {
            return Err(RlError::WrongArity {
                command: self.name(),
            });
        }
        Ok(())
    }

    /// The usage line the README shows, e.g. `RL.SLIDE key limit window
    /// [COST cost]`: optional arguments in brackets, repeated ones as
    /// `name [name ...]`.
    pub fn synopsis(&self) -> String {
        let mut line = self.name().to_uppercase();
        for arg in self.args {
            let name = arg.name.to_string_lossy();
            let mut word = match arg.token_str() {
                Some(token) if arg.kind == ArgKind::Flag => token.to_string(),
                Some(token) => format!("{token} {name}"),
                None => name.to_string(),
            };
            if arg.multiple() {
                word = format!("{word} [{word} ...]");
            }
            if arg.optional {
                word = format!("[{word}]");
            }
            line.push(' ');
            line.push_str(&word);
        }
        line
    }

    /// Walks the `TOKEN value` pairs after the positional arguments, handing
    /// each to `on_option` under its declared token (matched
    /// case-insensitively). An undeclared token or a token without its value
    /// is an error naming it. Inlined, as `check_count`.
    #[inline(always)]
    pub fn for_each_option<'a>(
        &self,
        line: &[&'a [u8]],
        mut on_option: impl FnMut(&'static str, &'a [u8]) -> Result<(), RlError>,
    ) -> Result<(), RlError> {
        // The options start after the name and the positional arguments.
        let mut at = 1 + self.args.iter().filter(|a| a.token.is_none()).count();
        while at < line.len() {
            let given = line[at];
            // RL.PEEK takes OLDEST off its line before the limiter's parser
            // runs: anywhere else it is refused by name.
            if given.eq_ignore_ascii_case(b"OLDEST") {
                return Err(RlError::OldestOnlyInPeek {
                    command: self.name().to_string(),
                });
            }
            // The limiters' own commands take UPTO off their line first
            // (`upto::take_upto`): anywhere else it is refused by name.
            if given.eq_ignore_ascii_case(b"UPTO") {
                return Err(RlError::UptoOnlyInLimiters {
                    command: self.name().to_string(),
                });
            }
            // The waiting commands take WAIT off their line first
            // (`wait::split`): a parser never reads it as an option, and
            // elsewhere it is unknown, as the function edition says too.
            if given.eq_ignore_ascii_case(WAIT_TOKEN.as_bytes()) {
                return Err(RlError::UnknownOption(super::error::token_text(given)));
            }
            let token = self
                .args
                .iter()
                .filter_map(ArgSpec::token_str)
                .find(|t| given.eq_ignore_ascii_case(t.as_bytes()))
                .ok_or_else(|| RlError::UnknownOption(super::error::token_text(given)))?;
            let value = line
                .get(at + 1)
                .copied()
                .ok_or(RlError::MissingValue { option: token })?;
            on_option(token, value)?;
            at += 2;
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Checks that `parse` names each declared integer argument in its
    /// error when that argument is not a number: the parser's names are the
    /// declaration's. `valid` is a line `parse` accepts, written out with
    /// every positional argument and without options.
    pub(crate) fn errors_name_declared_arguments<T: std::fmt::Debug>(
        syntax: &Syntax,
        valid: &str,
        parse: impl Fn(&[&[u8]]) -> Result<T, RlError>,
    ) {
        let words: Vec<&str> = valid.split(' ').collect();
        parse(&words.iter().map(|w| w.as_bytes()).collect::<Vec<_>>())
            .unwrap_or_else(|e| panic!("{valid}: {e}"));
        for (i, arg) in syntax.args.iter().enumerate() {
            // WAIT never reaches a parser: the host takes it off first.
            if arg.kind != ArgKind::Integer
                || arg
                    .token
                    .is_some_and(|t| t.to_bytes() == WAIT_TOKEN.as_bytes())
            {
                continue;
            }
            let name = arg.name.to_str().unwrap();
            let mut line = words.clone();
            let named = match arg.token_str() {
                Some(token) => {
                    line.extend([token, "x"]);
                    token
                }
                None => {
                    line[1 + i] = "x";
                    name
                }
            };
            let bytes: Vec<&[u8]> = line.iter().map(|w| w.as_bytes()).collect();
            let err = parse(&bytes).expect_err(&line.join(" ")).to_string();
            assert!(
                err.starts_with(&format!("ERR {named} ")),
                "{}: error {err:?} does not name '{named}'",
                line.join(" ")
            );
        }
    }

    #[rustfmt::skip]
    const ARGS: &[ArgSpec] = &[
        ArgSpec { name: c"key", kind: ArgKind::Key, token: None, optional: false },
        ArgSpec { name: c"limit", kind: ArgKind::Integer, token: None, optional: false },
        ArgSpec { name: c"cost", kind: ArgKind::Integer, token: Some(c"COST"), optional: true },
    ];
    const DECL: Syntax = Syntax {
        command: c"t",
        args: ARGS,
    };
    const POSITIONAL: Syntax = Syntax {
        command: c"t",
        args: &[ARGS[0], ARGS[1]],
    };

    #[test]
    fn arity_and_counts_follow_the_declaration() {
        assert_eq!(DECL.min_args(), 3);
        assert_eq!(DECL.arity(), -3);
        assert_eq!(POSITIONAL.arity(), 3);
        assert!(DECL.check_count(2).is_err());
        assert!(DECL.check_count(9).is_ok());
        assert!(POSITIONAL.check_count(3).is_ok());
        assert_eq!(
            POSITIONAL.check_count(4),
            Err(RlError::WrongArity { command: "t" })
        );
    }

    #[test]
    fn synopsis_spells_optional_and_repeated_arguments() {
        assert_eq!(DECL.synopsis(), "T key limit [COST cost]");
        #[rustfmt::skip]
        let repeated = Syntax {
            command: c"t",
            args: &[
                ArgSpec { name: c"key", kind: ArgKind::Keys, token: None, optional: false },
                ArgSpec { name: c"arg", kind: ArgKind::Strings, token: None, optional: true },
            ],
        };
        assert_eq!(repeated.synopsis(), "T key [key ...] [arg [arg ...]]");
    }

    #[test]
    fn options_are_the_declared_tokens() {
        let line: Vec<&[u8]> = vec![b"T", b"k", b"5", b"cost", b"2"];
        let mut seen = Vec::new();
        DECL.for_each_option(&line, |t, v| {
            seen.push((t, v.to_vec()));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, [("COST", b"2".to_vec())]);
        let line: Vec<&[u8]> = vec![b"T", b"k", b"5", b"BY", b"2"];
        assert_eq!(
            DECL.for_each_option(&line, |_, _| Ok(())),
            Err(RlError::UnknownOption("BY".into()))
        );
        let line: Vec<&[u8]> = vec![b"T", b"k", b"5", b"COST"];
        assert_eq!(
            DECL.for_each_option(&line, |_, _| Ok(())),
            Err(RlError::MissingValue { option: "COST" })
        );
    }
}
