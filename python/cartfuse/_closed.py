"""What a closed env holds in place of its native part."""

from __future__ import annotations

from typing import NoReturn

from gymnasium.error import ClosedEnvironmentError


class ClosedNative:
    """Stands in for the native envs of a closed env: any use raises
    ``gymnasium.error.ClosedEnvironmentError`` naming the call and the env."""

    def __init__(self, owner: str) -> None:
        self._owner = owner

    def __getattr__(self, name: str) -> NoReturn:
        raise ClosedEnvironmentError(
            f"{name}: this {self._owner} was closed (close() released its envs); make a new one"
        )
