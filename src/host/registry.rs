//! Command declarations and their registration at load time.
//!
//! Each command file adds one [`CommandSpec`] to [`COMMANDS`] with
//! [`command!`](crate::command!): its name and arguments, flags, key spec,
//! docs, body and INFO counters in one declaration. At load we
//! create the command and give the server its arity, key spec and argument
//! docs through `RedisModule_SetCommandInfo`, which drives `COMMAND INFO`,
//! `COMMAND DOCS`, `COMMAND GETKEYS`, Cluster routing and ACL key patterns.
//! We do not use the binding's `#[command]` attribute: it requires
//! `RedisModule_SetCommandACLCategories`, which Redis 7.0 lacks.

use std::ffi::CStr;
use std::os::raw::c_int;
use std::ptr;

use super::ffi;
use linkme::distributed_slice;

use super::context::CommandCtx;
use super::ffi::OK;
use super::ffi::{api, optional_api};
pub use super::key_access::KeyAccess;
use super::metrics::{Counters, Registration};
use super::reply::Reply;
use crate::core::error::RlError;
use crate::core::load_options::LoadOptions;
use crate::core::syntax::{ArgKind, ArgSpec, Syntax};

/// The server's callback type for a command.
pub type Callback = extern "C" fn(*mut ffi::Ctx, *mut *mut ffi::Str, c_int) -> c_int;

/// A command body: the context and the arguments as bytes (name included).
pub type Handler = fn(&CommandCtx, &[&[u8]]) -> Result<Reply, RlError>;

/// A command's full declaration.
pub struct CommandSpec {
    /// Its name and arguments, as the parser reads them; the arity follows
    /// from them.
    pub syntax: &'static Syntax,
    /// Server flags, e.g. `write deny-oom`.
    pub flags: &'static CStr,
    pub summary: &'static CStr,
    pub complexity: &'static CStr,
    pub since: &'static CStr,
    /// The key layout: the single key at argument 1 unless the variant
    /// says otherwise.
    pub key: KeyAccess,
    /// The command's body.
    pub handler: Handler,
    /// What the server calls: runs `handler` for this declaration (made by
    /// [`command!`](crate::command!)).
    pub callback: Callback,
    /// Calls since load, by how they ended (`INFO rl`), and what the load
    /// did with the command.
    pub counters: Counters,
}

#[distributed_slice]
pub static COMMANDS: [CommandSpec];

/// The ACL category every rl command belongs to, so `+@ratelimit` works.
pub const ACL_CATEGORY: &CStr = c"ratelimit";

/// What the load registered.
pub(crate) struct Registered {
    /// Whether the `ratelimit` ACL category could be added (Redis 7.4+,
    /// Valkey 8+); older servers load rl without it.
    pub category: bool,
    /// Declared commands left out because the server already had a command
    /// of that name (built in, or another module's such as redis-cell's
    /// `cl.throttle`).
    pub skipped: Vec<&'static str>,
}

/// Creates every declared command the load options keep, except those
/// whose name the server already has: each of those is logged and left to
/// its owner, and rl loads with the others. Any other refusal fails the load.
pub(crate) fn register_all(
    ctx: *mut ffi::Ctx,
    options: &LoadOptions,
) -> Result<Registered, String> {
    // After `MODULE UNLOAD` the library may stay mapped and keep its
    // statics: forget the previous load's registrations.
    for spec in COMMANDS {
        spec.counters.mark(Registration::Absent);
    }
    check_plain_commands(ctx)?;
    let category = add_acl_category(ctx);
    let mut skipped = Vec::new();
    for spec in COMMANDS {
        let name = spec.syntax.name();
        if !options.registers(name) {
            continue;
        }
        match server_has_command(ctx, spec.syntax.command) {
            Some(true) => {
                ffi::log(ctx, c"notice", &skipped_line(name));
                spec.counters.mark(Registration::Skipped);
                skipped.push(name);
            }
            Some(false) => register(ctx, spec, category)?,
            // COMMAND INFO could not tell (renamed away?): creating the
            // command is the only check left, and it does not say why.
            None => register(ctx, spec, category).map_err(|e| {
                format!("{e} (it may be the name of another command: COMMAND INFO could not tell)")
            })?,
        }
    }
    skipped.sort_unstable();
    Ok(Registered { category, skipped })
}

/// The plain commands rl replicates its writes as, and reads through: a
/// server where one was renamed away (`rename-command`) would apply a write
/// on the primary and silently drop it on replicas and in the AOF, so rl
/// does not load there.
const PLAIN_COMMANDS: [&CStr; 9] = [
    c"zadd",
    c"zremrangebyrank",
    c"zrem",
    c"hset",
    c"hdel",
    c"set",
    c"pexpireat",
    c"zcount",
    c"zrange",
];

fn check_plain_commands(ctx: *mut ffi::Ctx) -> Result<(), String> {
    for name in PLAIN_COMMANDS {
        // `None`: COMMAND itself is renamed; nothing to check with.
        if server_has_command(ctx, name) == Some(false) {
            let name = name.to_string_lossy().to_uppercase();
            return Err(format!(
                "the server has no {name} command (renamed with rename-command?); rl replicates its writes as plain commands and needs it; module not loaded"
            ));
        }
    }
    Ok(())
}

/// The log line for a command left out because its name was taken.
fn skipped_line(name: &str) -> String {
    let hint = if name == "cl.throttle" {
        " (load rl with CL.THROTTLE off to leave it out without this line)"
    } else {
        ""
    };
    format!(
        "skipped command {name}: the server already has a command of that name (built in or from another module); rl's other commands are loaded{hint}"
    )
}

/// Whether the server already knows a command named `name`: the check
/// `CreateCommand` makes before refusing (`lookupCommandByCString` in Redis
/// 7.0 to 8.2 and Valkey 9), asked through `COMMAND INFO`, which looks the
/// name up the same way. `None` if the server did not answer.
fn server_has_command(ctx: *mut ffi::Ctx, name: &CStr) -> Option<bool> {
    // SAFETY: ctx is the load context, which has a client for calls; the
    // reply is freed before returning, its element with it.
    unsafe {
        let reply = api!(Call)(
            ctx,
            c"COMMAND".as_ptr(),
            c"cc".as_ptr(),
            c"INFO".as_ptr(),
            name.as_ptr(),
        );
        if reply.is_null() {
            return None;
        }
        // `[entry]` for a known name, `[nil]` for an unknown one.
        let known = if api!(CallReplyType)(reply) == ffi::REPLY_ARRAY
            && api!(CallReplyLength)(reply) == 1
        {
            let entry = api!(CallReplyArrayElement)(reply, 0);
            Some(!entry.is_null() && api!(CallReplyType)(entry) == ffi::REPLY_ARRAY)
        } else {
            None
        };
        api!(FreeCallReply)(reply);
        known
    }
}

fn add_acl_category(ctx: *mut ffi::Ctx) -> bool {
    // SAFETY: called during OnLoad, the only time the server accepts it.
    unsafe {
        match (
            optional_api!(AddACLCategory),
            optional_api!(SetCommandACLCategories),
        ) {
            // EBUSY: the category exists already. The server keeps a
            // module's categories after MODULE UNLOAD, so a reloaded rl
            // finds its own and uses it again.
            (Some(add), Some(_)) => {
                add(ctx, ACL_CATEGORY.as_ptr()) == OK
                    || std::io::Error::last_os_error().kind() == std::io::ErrorKind::ResourceBusy
            }
            _ => false,
        }
    }
}

fn register(ctx: *mut ffi::Ctx, spec: &CommandSpec, category: bool) -> Result<(), String> {
    let name = spec.syntax.name();
    let (first, last, step) = spec.key.legacy_range();
    // SAFETY: all pointers are 'static C strings or live for this call; the
    // server copies the command info.
    unsafe {
        if api!(CreateCommand)(
            ctx,
            spec.syntax.command.as_ptr(),
            Some(spec.callback),
            spec.flags.as_ptr(),
            first,
            last,
            step,
        ) != OK
        {
            return Err(format!("could not create command {name}"));
        }
        let command = api!(GetCommand)(ctx, spec.syntax.command.as_ptr());
        if command.is_null() {
            return Err(format!("could not find command {name} after creating it"));
        }
        let mut key_specs = [key_spec(spec.key), zeroed_key_spec()];
        let mut args: Vec<ffi::CommandArg> = spec.syntax.args.iter().map(command_arg).collect();
        args.push(zeroed_arg());
        let mut info = ffi::CommandInfo {
            version: &INFO_VERSION,
            summary: spec.summary.as_ptr(),
            complexity: spec.complexity.as_ptr(),
            since: spec.since.as_ptr(),
            history: ptr::null_mut(),
            tips: ptr::null(),
            arity: spec.syntax.arity(),
            key_specs: key_specs.as_mut_ptr(),
            args: args.as_mut_ptr(),
        };
        if api!(SetCommandInfo)(command, &mut info) != OK {
            return Err(format!("server refused the command info of {name}"));
        }
        // `category` is true only where the server has this call (7.4+).
        if let (true, Some(set)) = (category, optional_api!(SetCommandACLCategories)) {
            if set(command, ACL_CATEGORY.as_ptr()) != OK {
                return Err(format!("server refused the ACL category of {name}"));
            }
        }
    }
    spec.counters.mark(Registration::Registered);
    Ok(())
}

static INFO_VERSION: ffi::CommandInfoVersion = ffi::CommandInfoVersion {
    version: 1,
    sizeof_historyentry: std::mem::size_of::<ffi::CommandHistoryEntry>(),
    sizeof_keyspec: std::mem::size_of::<ffi::CommandKeySpec>(),
    sizeof_arg: std::mem::size_of::<ffi::CommandArg>(),
};

fn key_spec(access: KeyAccess) -> ffi::CommandKeySpec {
    let flags = match access {
        KeyAccess::ReadWriteUpdate
        | KeyAccess::ReadWriteUpdateAt(_)
        | KeyAccess::ReadWriteUpdateKeyNum(_) => ffi::CMD_KEY_RW | ffi::CMD_KEY_UPDATE,
        KeyAccess::ReadOnly | KeyAccess::ReadOnlyAt(_) => ffi::CMD_KEY_RO | ffi::CMD_KEY_ACCESS,
    };
    let mut spec = zeroed_key_spec();
    spec.flags = flags;
    spec.begin_search_type = ffi::KSPEC_BS_INDEX;
    if let KeyAccess::ReadWriteUpdateKeyNum(numkeys_at) = access {
        // Like EVAL: the count at `numkeys_at`, the keys right after it.
        // The spec alone would report any `numkeys` arguments as keys,
        // whatever follows (`RL.ALL 5 a SLIDE 1 1`: four "keys"), and ACL and
        // `COMMAND GETKEYS` prefer it to the key callback, which only
        // reports keys of a call the command accepts. VARIABLE_FLAGS ("ask
        // the callback") makes every server (Redis 7.0 to 8.2, Valkey 9) use
        // the callback there too; Cluster routing always does.
        spec.flags |= ffi::CMD_KEY_VARIABLE_FLAGS;
        spec.bs.index.pos = numkeys_at;
        spec.find_keys_type = ffi::KSPEC_FK_KEYNUM;
        spec.fk.keynum.keynumidx = 0;
        spec.fk.keynum.firstkey = 1;
        spec.fk.keynum.keystep = 1;
        return spec;
    }
    spec.bs.index.pos = match access {
        KeyAccess::ReadOnlyAt(at) | KeyAccess::ReadWriteUpdateAt(at) => at,
        _ => 1,
    };
    spec.find_keys_type = ffi::KSPEC_FK_RANGE;
    spec.fk.range.lastkey = 0;
    spec.fk.range.keystep = 1;
    spec.fk.range.limit = 0;
    spec
}

fn command_arg(arg: &ArgSpec) -> ffi::CommandArg {
    let type_ = match arg.kind {
        ArgKind::Key => ffi::ARG_TYPE_KEY,
        ArgKind::Integer => ffi::ARG_TYPE_INTEGER,
        ArgKind::String | ArgKind::Strings => ffi::ARG_TYPE_STRING,
        ArgKind::Keys => ffi::ARG_TYPE_KEY,
        ArgKind::Flag => ffi::ARG_TYPE_PURE_TOKEN,
    };
    let mut out = zeroed_arg();
    out.name = arg.name.as_ptr();
    out.type_ = type_;
    out.key_spec_index = if matches!(arg.kind, ArgKind::Key | ArgKind::Keys) {
        0
    } else {
        -1
    };
    out.token = arg.token.map_or(ptr::null(), CStr::as_ptr);
    out.flags = if arg.optional {
        ffi::CMD_ARG_OPTIONAL as c_int
    } else {
        0
    };
    if matches!(arg.kind, ArgKind::Keys | ArgKind::Strings) {
        out.flags |= ffi::CMD_ARG_MULTIPLE;
    }
    out
}

fn zeroed_key_spec() -> ffi::CommandKeySpec {
    // SAFETY: an all-zero key spec is the documented array terminator.
    unsafe { std::mem::zeroed() }
}

fn zeroed_arg() -> ffi::CommandArg {
    // SAFETY: an all-zero argument is the documented array terminator.
    unsafe { std::mem::zeroed() }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command reference (docs/commands.md) and the README's overview
    /// show each command's usage line as its declaration spells it.
    /// `RL.PEEK`'s line names the limiter choices and their parameters
    /// instead of the generic `limiter key [parameter ...]`.
    #[test]
    fn docs_usage_lines_follow_the_declarations() {
        let docs = [
            ("docs/commands.md", include_str!("../../docs/commands.md")),
            ("README.md", include_str!("../../README.md")),
        ];
        let mut checked = 0;
        for spec in COMMANDS {
            if spec.syntax.name() == "rl.peek" {
                continue;
            }
            let usage = spec.syntax.synopsis();
            for (file, text) in docs {
                assert!(
                    text.lines().any(|line| line == usage),
                    "{file} lacks the line `{usage}`"
                );
            }
            checked += 1;
        }
        assert!(checked >= 8, "only {checked} commands declared");
    }
}
