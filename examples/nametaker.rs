//! Test fixture: a module named `nametaker` that owns command names before
//! rl loads, as redis-cell owns `CL.THROTTLE` or a server could build in
//! `RL.THROTTLE`. Its load arguments are the names to take (default
//! `cl.throttle rl.throttle`); each command answers `+nametaker`.

use std::ffi::CString;
use std::os::raw::c_int;

use redis_module::raw;

const OK: c_int = raw::REDISMODULE_OK as c_int;
const ERR: c_int = raw::REDISMODULE_ERR as c_int;

extern "C" fn answer(
    ctx: *mut raw::RedisModuleCtx,
    _argv: *mut *mut raw::RedisModuleString,
    _argc: c_int,
) -> c_int {
    // SAFETY: ctx is the live context of the call.
    unsafe {
        if let Some(reply) = raw::RedisModule_ReplyWithSimpleString {
            reply(ctx, c"nametaker".as_ptr());
        }
    }
    OK
}

/// # Safety
/// Called by the server with its load context and `argc` arguments.
#[no_mangle]
pub unsafe extern "C" fn RedisModule_OnLoad(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    let version = raw::REDISMODULE_APIVER_1 as c_int;
    if raw::Export_RedisModule_Init(ctx, c"nametaker".as_ptr(), 1, version) != OK {
        return ERR;
    }
    let (Some(create), Some(ptr_len)) = (
        raw::RedisModule_CreateCommand,
        raw::RedisModule_StringPtrLen,
    ) else {
        return ERR;
    };
    let mut names: Vec<CString> = (0..usize::try_from(argc).unwrap_or(0))
        .filter_map(|i| {
            let mut len = 0;
            let ptr = ptr_len(*argv.add(i), &mut len);
            let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len);
            CString::new(bytes).ok()
        })
        .collect();
    if names.is_empty() {
        names = vec![c"cl.throttle".to_owned(), c"rl.throttle".to_owned()];
    }
    for name in &names {
        if create(
            ctx,
            name.as_ptr(),
            Some(answer),
            c"readonly".as_ptr(),
            0,
            0,
            0,
        ) != OK
        {
            return ERR;
        }
    }
    OK
}
