//! The consistent-hash ring: every member placed at `virtual_nodes` points of a 64-bit circle
//! (the `hashring` crate, SipHash-1-3 with fixed zero keys, so every replica and every release
//! computes the same ring), a key owned by the first point clockwise of its hash.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use hashring::HashRing;

/// The default number of virtual nodes per member (the reference sharder's default too).
pub const DEFAULT_VIRTUAL_NODES: usize = 100;

#[derive(Clone, Debug, PartialEq, Eq)]
struct VirtualNode {
    member: Arc<str>,
    index: u32,
}

// Hashed as bytes written explicitly (not through `str`'s `Hash`, whose framing is std's to
// change): the member's name, a zero byte, the index big-endian.
impl Hash for VirtualNode {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write(self.member.as_bytes());
        state.write(&[0]);
        state.write(&self.index.to_be_bytes());
    }
}

struct KeyBytes<'a>(&'a str);

impl Hash for KeyBytes<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write(self.0.as_bytes());
    }
}

/// A consistent-hash ring over a set of members (shard names).
///
/// ```
/// use kube_controller_runtime::sharding::Ring;
/// let ring = Ring::new(["a", "b", "c"], 100);
/// let owner = ring.owner("apps/Deployment/default/web").unwrap();
/// assert!(["a", "b", "c"].contains(&owner));
/// // Removing another member never moves this key.
/// let others: Vec<&str> = ["a", "b", "c"].into_iter().filter(|m| *m == owner || *m == "a").collect();
/// assert_eq!(Ring::new(others, 100).owner("apps/Deployment/default/web"), Some(owner));
/// ```
#[derive(Clone)]
pub struct Ring {
    members: Vec<String>,
    virtual_nodes: usize,
    ring: HashRing<VirtualNode>,
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("members", &self.members)
            .field("virtual_nodes", &self.virtual_nodes)
            .finish()
    }
}

impl PartialEq for Ring {
    fn eq(&self, other: &Self) -> bool {
        self.members == other.members && self.virtual_nodes == other.virtual_nodes
    }
}

impl Ring {
    /// A ring of `members` (order and duplicates do not matter), each at `virtual_nodes`
    /// points (at least one).
    ///
    /// ```
    /// let ring = kube_controller_runtime::sharding::Ring::new(["b", "a", "b"], 10);
    /// assert_eq!(ring.members(), ["a", "b"]);
    /// ```
    pub fn new<S: AsRef<str>>(members: impl IntoIterator<Item = S>, virtual_nodes: usize) -> Self {
        let mut names: Vec<String> = members
            .into_iter()
            .map(|m| m.as_ref().to_string())
            .collect();
        names.sort();
        names.dedup();
        let virtual_nodes = virtual_nodes.max(1);
        let mut ring = HashRing::new();
        let points = names
            .iter()
            .flat_map(|m| {
                let member: Arc<str> = Arc::from(m.as_str());
                (0..virtual_nodes).map(move |i| VirtualNode {
                    member: member.clone(),
                    index: u32::try_from(i).unwrap_or(u32::MAX),
                })
            })
            .collect();
        ring.batch_add(points);
        Ring {
            members: names,
            virtual_nodes,
            ring,
        }
    }

    /// The members, sorted.
    ///
    /// ```
    /// assert!(kube_controller_runtime::sharding::Ring::new(Vec::<String>::new(), 1).members().is_empty());
    /// ```
    pub fn members(&self) -> &[String] {
        &self.members
    }

    /// Virtual nodes per member.
    ///
    /// ```
    /// assert_eq!(kube_controller_runtime::sharding::Ring::new(["a"], 7).virtual_nodes(), 7);
    /// ```
    pub fn virtual_nodes(&self) -> usize {
        self.virtual_nodes
    }

    /// The member owning `key` (`None` on an empty ring).
    ///
    /// ```
    /// let ring = kube_controller_runtime::sharding::Ring::new(["only"], 100);
    /// assert_eq!(ring.owner("any/Kind/ns/name"), Some("only"));
    /// ```
    pub fn owner(&self, key: &str) -> Option<&str> {
        self.ring.get(&KeyBytes(key)).map(|v| &*v.member)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_is_the_same_whatever_the_order_and_removing_a_member_moves_only_its_keys() {
        let abc = Ring::new(["a", "b", "c"], 100);
        let cba = Ring::new(["c", "b", "a"], 100);
        let ab = Ring::new(["a", "b"], 100);
        let mut moved = 0;
        for i in 0..2000 {
            let key = format!("g/K/ns/obj-{i}");
            assert_eq!(abc.owner(&key), cba.owner(&key));
            let before = abc.owner(&key).unwrap();
            let after = ab.owner(&key).unwrap();
            if before != "c" {
                assert_eq!(before, after, "{key} moved though its owner stayed");
            } else {
                moved += 1;
            }
        }
        assert!(moved > 0);
    }
}
