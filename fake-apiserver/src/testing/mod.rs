//! Test hooks: the record of actions, reactors that answer or fail requests, and watch
//! reactors for fault injection (client-go's `testing.Fake` chain).

pub(crate) mod reactor;
