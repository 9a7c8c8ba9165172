//! The tensor learner (burn tensor ops, agents a batch dimension) on NdArray against the
//! native learner: one update of a made-up population from the same weights. The runtime
//! suites run the same check on wgpu.

use burn::backend::{Autodiff, NdArray};
use cartfuse_train::tensor_learner::check::difference_from_native;

#[test]
fn tensor_learner_steps_as_the_native_learner() {
    for (agents, hidden) in [(2, 8), (4, 64)] {
        let d = difference_from_native::<Autodiff<NdArray>>(agents, hidden, &Default::default())
            .unwrap();
        assert!(d.weights < 1e-4, "{agents} agents, {hidden} wide: {d:?}");
        assert!(d.losses < 1e-4, "{agents} agents, {hidden} wide: {d:?}");
        assert!(d.stopped_agent_kept_its_weights, "{d:?}");
        // The update moved the weights far more than the learners differ.
        assert!(d.moved > 100.0 * d.weights.max(1e-7), "{d:?}");
        eprintln!("{agents} agents, {hidden} wide: {d:?}");
    }
}
