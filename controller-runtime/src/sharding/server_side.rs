//! KEP-5866 server-side sharding of lists and watches (`shardSelector`, kube-apiserver's
//! alpha `ShardedListAndWatch` gate): static uid ranges and a probe for servers that filter.
//!
//! The ring of this module's parent partitions *keys* (group/kind/namespace/name, owned objects
//! by their controller owner) among a changing set of members; a `shardSelector` partitions
//! *objects* by the FNV-1a hash of their own uid into fixed ranges. The two do not agree: an
//! object's ring owner says nothing about its uid range, and a child's uid is not its owner's,
//! so a replica whose informers saw only its uid range would miss the children of the owners
//! it reconciles and the owners it must reconcile. Server-side filtering is therefore offered
//! here for *static range partitioning* (kube-state-metrics' model, KEP-5866's first user): N
//! replicas with distinct indices (a StatefulSet's ordinals), replica `i` caching and
//! reconciling the objects in range `i` of `N` of a kind it does not need owner links for. A
//! replica that is down leaves its range unreconciled until it is back; there is no handover.

use kube::Client;

use super::ShardingError;

/// The selector that selects every object (the whole hash space).
const EVERYTHING: &str =
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')";

/// The bound of a KEP-5866 range as the server takes it: `0x` and 16 lowercase hex digits, or
/// `0x10000000000000000` for 2^64.
fn bound(v: u128) -> String {
    if v >= 1 << 64 {
        "0x10000000000000000".to_string()
    } else {
        format!("0x{v:016x}")
    }
}

/// The `shardSelector` of range `index` of `count` equal ranges of the uid hash space (the
/// last one takes the remainder), for
/// [`InformerOptions::shard_selector`](kube_codegen_runtime::informer::InformerOptions::shard_selector).
///
/// ```
/// use kube_controller_runtime::sharding::uid_range_selector;
///
/// assert_eq!(
///     uid_range_selector(1, 2)?,
///     "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
/// );
/// assert!(uid_range_selector(2, 2).is_err());
/// # Ok::<(), kube_controller_runtime::sharding::ShardingError>(())
/// ```
pub fn uid_range_selector(index: u32, count: u32) -> Result<String, ShardingError> {
    if count == 0 || index >= count {
        return Err(ShardingError::InvalidRange { index, count });
    }
    let space: u128 = 1 << 64;
    let start = space * u128::from(index) / u128::from(count);
    let end = space * (u128::from(index) + 1) / u128::from(count);
    Ok(format!(
        "shardRange(object.metadata.uid, '{}', '{}')",
        bound(start),
        bound(end)
    ))
}

/// Whether the server filters lists and watches by `shardSelector`: lists `list_path` (a
/// collection the caller may list, such as `/api/v1/namespaces/default/configmaps`) with
/// `limit=1` and a selector of the whole hash space, and reads the answer's
/// `metadata.shardInfo`, which kube-apiserver v1.37.1 sets only with the `ShardedListAndWatch`
/// gate on (off, it ignores the parameter).
pub async fn server_supports_shard_selector(
    client: &Client,
    list_path: &str,
) -> Result<bool, kube::Error> {
    let selector: String = form_urlencoded::byte_serialize(EVERYTHING.as_bytes()).collect();
    let sep = if list_path.contains('?') { '&' } else { '?' };
    let req = http::Request::get(format!("{list_path}{sep}limit=1&shardSelector={selector}"))
        .body(Vec::new())
        .map_err(|e| kube::Error::BuildRequest(kube::core::request::Error::BuildRequest(e)))?;
    let list: serde_json::Value = client.request(req).await?;
    let supported = list
        .pointer("/metadata/shardInfo/selector")
        .is_some_and(|s| s.is_string());
    tracing::debug!(
        list_path,
        supported,
        "probed the server for KEP-5866 shardSelector"
    );
    Ok(supported)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_tile_the_hash_space() {
        for count in [1u32, 2, 3, 4, 7] {
            let mut prev_end = "0x0000000000000000".to_string();
            for i in 0..count {
                let s = uid_range_selector(i, count).unwrap();
                let parts: Vec<&str> = s.split('\'').collect();
                assert_eq!(parts[1], prev_end, "{s}");
                prev_end = parts[3].to_string();
            }
            assert_eq!(prev_end, "0x10000000000000000");
        }
        assert!(uid_range_selector(0, 0).is_err());
    }
}
