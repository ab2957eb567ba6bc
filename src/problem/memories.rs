//! Several memories: each with an id, a capacity and a cost per byte.

use serde::{Deserialize, Serialize};

/// One memory a buffer may go to (an on-chip SRAM, a tightly coupled memory, DRAM, ...).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    /// The name buffers use for it in their `memories` list.
    pub id: String,
    /// Its size in bytes (`> 0`).
    pub capacity: u64,
    /// What a byte placed in it costs (default 0); a solve minimises the total.
    #[serde(default, deserialize_with = "super::null_as_default")]
    pub cost: u64,
}

impl Memory {
    /// A memory of `capacity` bytes at `cost` per byte.
    pub fn new(id: impl Into<String>, capacity: u64, cost: u64) -> Memory {
        Memory {
            id: id.into(),
            capacity,
            cost,
        }
    }
}
