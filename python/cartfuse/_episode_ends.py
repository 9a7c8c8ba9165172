"""Where a vector env's episodes ended, as gymnasium's ``SyncVectorEnv`` keeps it between
calls: which envs ended on the last step (``DISABLED`` refuses to step them before a reset),
which have had no action since their reset and the last actions (what rendering draws), and
``SAME_STEP``'s ``info`` of the final observations."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium.vector import AutoresetMode

from cartfuse._catalog import ActArray, ObsArray


class EpisodeEnds:
    """What one vector env of ``num_envs`` envs remembers of its episodes' ends, kept only
    where it matters: under ``DISABLED`` and when it renders."""

    def __init__(self, num_envs: int, mode: AutoresetMode, rendering: bool) -> None:
        self._mode = mode
        self._rendering = rendering
        # `terminated | truncated` of the last step.
        self._ended: npt.NDArray[np.bool_] | None = None
        if mode == AutoresetMode.DISABLED or rendering:
            self._ended = np.zeros(num_envs, dtype=np.bool_)
        # Rendering only: the last actions, and which envs have none since their reset
        # (gymnasium's Pendulum draws the last torque, none after a reset).
        self._last_actions: ActArray | None = None
        self._no_action = np.ones(num_envs, dtype=np.bool_)

    def reset(self, selected: slice | npt.NDArray[np.bool_]) -> None:
        """The envs ``selected`` start new episodes, with no action yet."""
        if self._ended is not None:
            self._ended[selected] = False
        self._no_action[selected] = True

    def state_set(self) -> None:
        """Every env's state was overwritten: none has ended (the last actions stay)."""
        if self._ended is not None:
            self._ended[:] = False

    def check_steppable(self) -> None:
        """``DISABLED``: no env that ended may be stepped before it is reset (gymnasium's
        ``SyncVectorEnv`` asserts the same)."""
        if self._mode != AutoresetMode.DISABLED or self._ended is None or not self._ended.any():
            return
        ended = np.flatnonzero(self._ended)
        shown = ", ".join(str(i) for i in ended[:10]) + (", ..." if len(ended) > 10 else "")
        raise AssertionError(
            f"step: {len(ended)} env(s) ended (terminated or truncated) and were not reset "
            f"(envs {shown}): with autoreset_mode=DISABLED, reset them first, e.g. "
            "reset(options={'reset_mask': terminated | truncated}), as gymnasium's "
            "SyncVectorEnv requires"
        )

    def started(self, actions: ActArray) -> None:
        """A step with ``actions`` started (kept when rendering: Pendulum draws them)."""
        if self._rendering:
            self._last_actions = np.array(actions, copy=True)

    def stepped(self, terminated: npt.NDArray[np.bool_], truncated: npt.NDArray[np.bool_]) -> None:
        """A step finished with these flags."""
        if self._ended is None:
            return
        done = terminated | truncated
        if self._rendering:
            # The envs this step reset have no last action (gymnasium's Pendulum clears it
            # on reset): NEXT_STEP resets those that ended before, SAME_STEP those that end
            # now.
            if self._mode == AutoresetMode.NEXT_STEP:
                self._no_action = self._ended.copy()
            elif self._mode == AutoresetMode.SAME_STEP:
                self._no_action = done.copy()
            else:
                self._no_action[:] = False
        self._ended = done

    def last_action(self, env: int) -> Any:
        """The action env ``env`` last took, ``None`` when it has none since its reset."""
        if self._last_actions is None or self._no_action[env]:
            return None
        return self._last_actions[env]


def same_step_info(
    terminated: npt.NDArray[np.bool_],
    truncated: npt.NDArray[np.bool_],
    final_obs: ObsArray | None,
) -> dict[str, Any]:
    """A ``SAME_STEP`` step's ``info`` as gymnasium's ``SyncVectorEnv`` gives it: none when
    no episode ended, else an object array of the final observations (``None`` where the
    episode did not end), an (empty) ``final_info`` and a mask per key."""
    done = terminated | truncated
    if not done.any():
        return {}
    assert final_obs is not None
    ended = np.flatnonzero(done)
    final = np.full(len(done), None, dtype=object)
    final[ended] = list(final_obs[ended])  # fancy indexing copies the rows
    return {
        "final_obs": final,
        "_final_obs": done,
        "final_info": {},
        "_final_info": done.copy(),
    }
