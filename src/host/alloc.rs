//! The global allocator: the server's allocator once the module is loaded
//! (so `INFO memory` and `MEMORY USAGE` account for us), the system allocator
//! in unit tests and benches, which link the crate without a server.

use std::alloc::{GlobalAlloc, Layout, System};

use super::ffi::{server_present, ServerAlloc};

pub struct ServerOrSystem;

// The choice never changes within a process: the server's API is set before
// any module code runs, and tests never get it.
unsafe impl GlobalAlloc for ServerOrSystem {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if server_present() {
            ServerAlloc.alloc(layout)
        } else {
            System.alloc(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if server_present() {
            ServerAlloc.dealloc(ptr, layout)
        } else {
            System.dealloc(ptr, layout)
        }
    }
}
