//! Instruction fusion (without, then with duplication) and the fusion merger, with the
//! checks of XLA's `InstructionFusion::ShouldFuse` and `GpuInstructionFusion::ShouldFuse`.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use super::computation::{Computation, invalidates_cache, reuses_index};
use super::{ALLOWED_CODE_DUPLICATION, MAX_OPERANDS_AND_OUTPUTS};
use crate::graph::NodeId;
use crate::plan::kernels::slot_width_bytes;

/// One pass of instruction fusion: consumers from the roots down (reverse post order),
/// each taking producers until none can be fused. Returns whether anything changed.
pub(super) fn instruction_fusion(c: &mut Computation, may_duplicate: bool) -> bool {
    let mut changed = false;
    let mut consumers = c.live();
    consumers.sort_by_key(|f| Reverse(last_node(c, *f)));
    for consumer in consumers {
        while !c.fusions[consumer].nodes.is_empty() {
            let mut producers: Vec<usize> = c.producers(consumer).into_iter().collect();
            producers.sort_by_key(|p| Reverse(last_node(c, *p)));
            // The first producer that may fuse; the refusals before it noted.
            let fusible = producers.into_iter().find(|p| {
                let verdict = should_fuse(c, *p, consumer, may_duplicate);
                verdict.map_err(|why| note(c, *p, why)).is_ok()
            });
            let Some(producer) = fusible else { break };
            let nodes = c.fusions[producer].nodes.clone();
            c.fuse_into(&nodes, consumer);
            changed = true;
        }
    }
    changed
}

/// The fusion merger: a fusion merges into its consumers only if it can merge into all of
/// them, is not expensive where it would be duplicated, writes no graph root, and merging
/// does not raise the bytes moved.
pub(super) fn fusion_merger(c: &mut Computation) -> bool {
    let mut changed = false;
    let mut producers = c.live();
    producers.sort_by_key(|f| last_node(c, *f));
    for producer in producers {
        if c.fusions[producer].nodes.len() < 2 {
            continue; // an unfused op: instruction fusion's business
        }
        if let Err(why) = can_merge(c, producer) {
            note(c, producer, why);
            continue;
        }
        let nodes = c.fusions[producer].nodes.clone();
        for consumer in c.consumers(producer) {
            c.fuse_into(&nodes, consumer);
        }
        changed = true;
    }
    changed
}

fn can_merge(c: &Computation, producer: usize) -> Result<(), String> {
    if c.is_call(producer) || c.is_reduction(producer) || c.writes_root(producer) {
        return Err("fusion merger: writes a graph root, or is not a loop fusion".into());
    }
    let consumers = c.consumers(producer);
    if consumers.is_empty() {
        return Err("fusion merger: no consumers".into());
    }
    if c.is_expensive(producer) && consumers.len() > 1 {
        return Err(format!(
            "fusion merger: expensive, and merging would duplicate it into {} fusions",
            consumers.len()
        ));
    }
    for consumer in &consumers {
        fits(c, producer, *consumer).map_err(|why| format!("fusion merger: {why}"))?;
    }
    let read = c.bytes_read(&c.fusions[producer].nodes);
    let exposed = c.exposed(producer);
    let written: u64 = exposed.iter().map(|n| slot_width_bytes(c.graph, *n)).sum();
    let reread: u64 = consumers
        .iter()
        .map(|consumer| {
            let operands = c.operands_of(&c.fusions[*consumer].nodes);
            exposed
                .iter()
                .filter(|n| operands.contains(n))
                .map(|n| slot_width_bytes(c.graph, *n))
                .sum::<u64>()
        })
        .sum();
    let merged = read * consumers.len() as u64;
    if merged > read + written + reread {
        return Err(format!(
            "fusion merger: merging into {} fusions would move more bytes ({merged} vs {} per lane)",
            consumers.len(),
            read + written + reread
        ));
    }
    Ok(())
}

/// `ShouldFuse(producer -> consumer)` of XLA's instruction fusion.
fn should_fuse(
    c: &Computation,
    producer: usize,
    consumer: usize,
    may_duplicate: bool,
) -> Result<(), String> {
    if c.is_call(producer) {
        return Err("a custom call: fuses into nothing".into());
    }
    if c.is_reduction(producer) {
        return Err("a reduction fuses only as a consumer".into());
    }
    let exposed = c.exposed(producer);
    let [value] = exposed[..] else {
        return Err("a multi-output fusion is not fused into a consumer".into());
    };
    fits(c, producer, consumer)?;
    let readers = c.readers(value);
    let duplicates = c.graph.is_root(value) || readers.len() > 1;
    if !duplicates {
        return Ok(());
    }
    let name = c.graph.node(value).op.name();
    let users = readers.len() + usize::from(c.graph.is_root(value));
    if !may_duplicate {
        return Err(format!(
            "{value} ({name}) has {users} users: fusing would duplicate it"
        ));
    }
    if c.is_expensive(producer) {
        return Err(format!(
            "{value} ({name}) has {users} users and is too expensive to duplicate"
        ));
    }
    let reads_more = c.bytes_read(&c.fusions[producer].nodes) > slot_width_bytes(c.graph, value);
    let all_fuse = !c.graph.is_root(value) && readers.iter().all(|r| fits(c, producer, *r).is_ok());
    if reads_more && !all_fuse {
        return Err(format!(
            "{value} ({name}) has {users} users, reads more than it writes, and not all of them can fuse it"
        ));
    }
    Ok(())
}

/// The checks any fusion of `producer` into `consumer` must pass: neither is a custom call,
/// the result binds at most [`MAX_OPERANDS_AND_OUTPUTS`] buffers, and the producer's code
/// is not duplicated too much ([`ALLOWED_CODE_DUPLICATION`], and the rule against
/// cache-invalidating ops such as the concatenate with several users).
pub(super) fn fits(c: &Computation, producer: usize, consumer: usize) -> Result<(), String> {
    if c.is_call(consumer) {
        return Err("feeds a custom call, which fuses nothing".into());
    }
    let merged = c.merged(producer, consumer);
    let bound = c.operands_and_outputs(&merged, &[producer, consumer]);
    if bound > MAX_OPERANDS_AND_OUTPUTS {
        return Err(format!(
            "fusing would bind {bound} operands and outputs (XLA allows {MAX_OPERANDS_AND_OUTPUTS})"
        ));
    }
    if let Some((node, readers)) = c.concat_read_by_several(&merged) {
        return Err(concat_emitted_twice(c, node, readers));
    }
    let counts = index_usage(c, consumer);
    let invalidates = c.any(producer, |n| invalidates_cache(c.graph, n));
    for value in c.exposed(producer) {
        let users: Vec<NodeId> = (c.users(value).iter().copied())
            .filter(|u| counts.contains_key(u))
            .collect();
        let emitted: u64 = users.iter().map(|u| counts[u]).sum();
        if emitted > ALLOWED_CODE_DUPLICATION {
            return Err(format!(
                "{value} ({}) would be emitted {emitted} times (XLA allows {ALLOWED_CODE_DUPLICATION})",
                c.graph.node(value).op.name()
            ));
        }
        if c.options.concat_rule && invalidates && (emitted > 1 || users.len() > 1) {
            return Err(concat_emitted_twice(c, value, users.len()));
        }
    }
    Ok(())
}

/// Why `node`, a concatenate read by `readers` ops of one fusion, may not be fused there.
fn concat_emitted_twice(c: &Computation, node: NodeId, readers: usize) -> String {
    format!(
        "{node} ({}) is a concatenate read by {readers} ops of one fusion: XLA does not fuse a \
         cache-invalidating op emitted more than once",
        c.graph.node(node).op.name()
    )
}

/// XLA's `FusionNodeIndexingEvaluation`: how many times each node of `fusion` is emitted,
/// once per distinct index its (transitive) users read it at.
fn index_usage(c: &Computation, fusion: usize) -> BTreeMap<NodeId, u64> {
    let nodes = &c.fusions[fusion].nodes;
    let mut indexing: BTreeMap<NodeId, BTreeSet<NodeId>> = BTreeMap::new();
    let mut counts: BTreeMap<NodeId, u64> = BTreeMap::new();
    for &node in nodes.iter().rev() {
        let mut users_of_index = BTreeSet::new();
        let written = c.home(node) == fusion
            && (c.graph.is_root(node) || c.users(node).iter().any(|u| !nodes.contains(u)));
        if written {
            users_of_index.insert(node);
        }
        for user in c.users(node).iter().filter(|u| nodes.contains(u)) {
            if reuses_index(c.graph, node, *user) {
                users_of_index.extend(indexing[user].iter().copied());
            } else {
                users_of_index.insert(*user);
            }
        }
        let count = users_of_index
            .iter()
            .map(|u| if *u == node { 1 } else { counts[u] })
            .sum();
        counts.insert(node, count);
        indexing.insert(node, users_of_index);
    }
    counts
}

fn last_node(c: &Computation, f: usize) -> NodeId {
    c.fusions[f].nodes.last().copied().unwrap_or(NodeId(0))
}

fn note(c: &mut Computation, fusion: usize, why: String) {
    let reasons = &mut c.fusions[fusion].why;
    if !reasons.contains(&why) {
        reasons.push(why);
    }
}
