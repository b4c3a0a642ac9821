//! Storage: file striping over servers and disks (`layout`), disk service times and queues
//! (`disk`), caches (`cache`), and a server's CPU and metadata queues (`server`).

pub mod cache;
pub mod disk;
pub mod layout;
pub mod server;
