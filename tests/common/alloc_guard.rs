//! Arms `nice_assert_no_alloc` in a test binary that checks the engine's audio path: without
//! its allocator installed, `assert_no_alloc` checks nothing. Included (by path) only by
//! tests that do not link the plugin crate, whose nice-plug installs the same allocator when
//! it is built with `assert_process_allocs`.

#[global_allocator]
static GUARD: nice_assert_no_alloc::AllocDisabler = nice_assert_no_alloc::AllocDisabler;
