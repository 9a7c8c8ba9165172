"""Frames of cartfuse's environments in the size and layout of gymnasium's classic-control
renderers, drawn with numpy: ``render_mode="rgb_array"`` needs no pygame. Each scene places
the same shapes, with the same colours, at the same coordinates as gymnasium's ``render``
for that id (``gymnasium/envs/classic_control/*.py``), without its anti-aliased edges.
``render_mode="human"`` shows the frames in a pygame window (pygame must be installed).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium.error import DependencyNotInstalled

from cartfuse._canvas import Canvas, Point

Frame = npt.NDArray[np.uint8]


def _rotate(point: Point, angle: float) -> Point:
    """``pygame.math.Vector2(point).rotate_rad(angle)``."""
    x, y = point
    c, s = math.cos(angle), math.sin(angle)
    return (x * c - y * s, x * s + y * c)


def cartpole(state: npt.NDArray[np.float64], _action: object) -> Frame:
    """CartPole-v1: 600 x 400, the cart on its track and the pole at its angle."""
    canvas = Canvas(600, 400)
    scale = 600 / (2.4 * 2)
    pole_width, pole_len = 10.0, scale * (2 * 0.5)
    cart_width, cart_height = 50.0, 30.0
    cart_x, cart_y = state[0] * scale + 600 / 2.0, 100
    axle = cart_height / 4.0
    left, right, top, bottom = -cart_width / 2, cart_width / 2, cart_height / 2, -cart_height / 2
    cart = [(left, bottom), (left, top), (right, top), (right, bottom)]
    canvas.polygon([(x + cart_x, y + cart_y) for x, y in cart], (0, 0, 0))
    left, right = -pole_width / 2, pole_width / 2
    top, bottom = pole_len - pole_width / 2, -pole_width / 2
    pole = [
        _rotate(c, -state[2]) for c in [(left, bottom), (left, top), (right, top), (right, bottom)]
    ]
    canvas.polygon([(x + cart_x, y + cart_y + axle) for x, y in pole], (202, 152, 101))
    canvas.circle(int(cart_x), int(cart_y + axle), int(pole_width / 2), (129, 132, 203))
    canvas.line((0, cart_y), (600, cart_y), (0, 0, 0))
    return canvas.frame()


def _mountain_car(goal_position: float) -> Callable[[npt.NDArray[np.float64], object], Frame]:
    """MountainCar's scene with its flag at ``goal_position``."""
    min_position, max_position = -1.2, 0.6

    def height(xs: Any) -> Any:
        return np.sin(3 * xs) * 0.45 + 0.55

    def scene(state: npt.NDArray[np.float64], _action: object) -> Frame:
        canvas = Canvas(600, 400)
        scale = 600 / (max_position - min_position)
        car_width, car_height, clearance = 40, 20, 10
        xs = np.linspace(min_position, max_position, 100)
        track = list(zip((xs - min_position) * scale, height(xs) * scale, strict=True))
        canvas.polyline(track, (0, 0, 0))
        pos = float(state[0])
        tilt = math.cos(3 * pos)
        base = ((pos - min_position) * scale, clearance + height(pos) * scale)
        left, right, top, bottom = -car_width / 2, car_width / 2, car_height, 0
        corners = [
            _rotate(c, tilt) for c in [(left, bottom), (left, top), (right, top), (right, bottom)]
        ]
        canvas.polygon([(x + base[0], y + base[1]) for x, y in corners], (0, 0, 0))
        for wheel in [(car_width / 4, 0), (-car_width / 4, 0)]:
            x, y = _rotate(wheel, tilt)
            canvas.circle(
                int(x + base[0]), int(y + base[1]), int(car_height / 2.5), (128, 128, 128)
            )
        flag_x = int((goal_position - min_position) * scale)
        flag_y1 = int(height(goal_position) * scale)
        flag_y2 = flag_y1 + 50
        canvas.line((flag_x, flag_y1), (flag_x, flag_y2), (0, 0, 0))
        flag = [(flag_x, flag_y2), (flag_x, flag_y2 - 10), (flag_x + 25, flag_y2 - 5)]
        canvas.polygon(flag, (204, 204, 0))
        return canvas.frame()

    return scene


def acrobot(state: npt.NDArray[np.float64], _action: object) -> Frame:
    """Acrobot-v1: 500 x 500, the two links from the pivot and the target line."""
    canvas = Canvas(500, 500)
    scale = 500 / ((1.0 + 1.0 + 0.2) * 2)
    offset = 500 / 2
    theta1, theta2 = float(state[0]), float(state[1])
    p1 = (-1.0 * math.cos(theta1) * scale, 1.0 * math.sin(theta1) * scale)
    joints = [(0.0, 0.0), (p1[1], p1[0])]
    thetas = [theta1 - math.pi / 2, theta1 + theta2 - math.pi / 2]
    canvas.line(
        (-2.2 * scale + offset, 1 * scale + offset),
        (2.2 * scale + offset, 1 * scale + offset),
        (0, 0, 0),
    )
    for (x, y), theta in zip(joints, thetas, strict=True):
        x, y = x + offset, y + offset
        left, right, top, bottom = 0, 1.0 * scale, 0.1 * scale, -0.1 * scale
        link = [
            _rotate(c, theta) for c in [(left, bottom), (left, top), (right, top), (right, bottom)]
        ]
        canvas.polygon([(cx + x, cy + y) for cx, cy in link], (0, 204, 204))
        canvas.circle(int(x), int(y), int(0.1 * scale), (204, 204, 0))
    return canvas.frame()


def _clockwise_arrow(size: int) -> npt.NDArray[np.bool_]:
    """The pixels of gymnasium's ``assets/clockwise.png`` at ``size`` x ``size`` (as measured
    from the image): a ring from 12 o'clock clockwise round to 9 o'clock, its head pointing
    up there."""
    coords = (np.arange(size) + 0.5) / max(size, 1)
    xs, ys = coords[None, :], coords[:, None]
    center_x, radius, half_width = 0.495, 0.4926, 0.0195
    ring = np.abs(np.hypot(xs - center_x, ys - 0.5) - radius) <= half_width
    open_quarter = (xs < center_x) & (ys < 0.5)
    # The head: apex at (0.068, 0.35), base 0.136 wide at 0.58 (y down).
    depth = ys - 0.35
    head = (depth >= 0.0) & (ys <= 0.58) & (np.abs(xs - 0.068) <= depth * 0.3)
    return (ring & ~open_quarter) | head


def pendulum(state: npt.NDArray[np.float64], action: object) -> Frame:
    """Pendulum-v1: 500 x 500, the rod at its angle and an arrow sized by the last torque."""
    canvas = Canvas(500, 500)
    scale = 500 / (2.2 * 2)
    offset = 500 // 2
    rod_length, rod_width = 1 * scale, 0.2 * scale
    angle = float(state[0]) + np.pi / 2
    left, right, top, bottom = 0, rod_length, rod_width / 2, -rod_width / 2
    rod = [_rotate(c, angle) for c in [(left, bottom), (left, top), (right, top), (right, bottom)]]
    canvas.polygon([(x + offset, y + offset) for x, y in rod], (204, 77, 77))
    canvas.circle(offset, offset, int(rod_width / 2), (204, 77, 77))
    end_x, end_y = _rotate((rod_length, 0), angle)
    canvas.circle(int(end_x + offset), int(end_y + offset), int(rod_width / 2), (204, 77, 77))
    if action is not None:
        # gymnasium keeps the torque it applied: clipped to the action box, [-2, 2].
        torque = float(np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[0], -2.0, 2.0))
        size = int(scale * abs(torque) / 2)
        if size > 0:
            # gymnasium flips the image upside down before the blit and the whole picture
            # after it: the arrow ends up as drawn, mirrored left-right for a positive torque.
            arrow = _clockwise_arrow(size)[::-1]
            if torque > 0:
                arrow = arrow[:, ::-1]
            canvas.mask(arrow, offset - size // 2, offset - size // 2, (0, 0, 0))
    canvas.circle(offset, offset, int(0.05 * scale), (0, 0, 0))
    return canvas.frame()


#: The scene of each environment id: ``scene(state, last_action) -> frame``. An id without
#: one still steps; only asking it for a frame raises (``frame``). The frame rate is the
#: native module's (``env_info(id).render_fps``).
SCENES: dict[str, Callable[[npt.NDArray[np.float64], object], Frame]] = {
    "CartPole-v1": cartpole,
    "MountainCar-v0": _mountain_car(0.5),
    "MountainCarContinuous-v0": _mountain_car(0.45),
    "Acrobot-v1": acrobot,
    "Pendulum-v1": pendulum,
}


def frame(env_id: str, state: npt.NDArray[np.float64], last_action: object = None) -> Frame:
    """The ``(height, width, 3)`` uint8 frame of ``env_id`` in ``state`` (gymnasium's
    ``env.unwrapped.state`` order); Pendulum also draws ``last_action``."""
    scene = SCENES.get(env_id)
    if scene is None:
        raise ValueError(f"env_id: no renderer for {env_id!r}; expected one of {sorted(SCENES)}")
    return scene(np.asarray(state, dtype=np.float64), last_action)


class Window:
    """A pygame window showing frames at ``fps`` (``render_mode="human"``)."""

    def __init__(self, title: str, fps: int) -> None:
        try:
            import pygame
        except ImportError as error:
            raise DependencyNotInstalled(
                'render_mode="human" shows frames with pygame: run `pip install pygame` '
                '(render_mode="rgb_array" needs nothing)'
            ) from error
        self._pygame = pygame
        self._title = title
        self._fps = fps
        self._screen: Any = None
        self._clock = pygame.time.Clock()

    def show(self, picture: Frame) -> None:
        """Draws ``picture`` and waits for the frame rate."""
        pygame = self._pygame
        if self._screen is None:
            pygame.display.init()
            pygame.display.set_caption(self._title)
            self._screen = pygame.display.set_mode((picture.shape[1], picture.shape[0]))
        pygame.surfarray.blit_array(self._screen, np.transpose(picture, (1, 0, 2)))
        pygame.event.pump()
        self._clock.tick(self._fps)
        pygame.display.flip()

    def close(self) -> None:
        """Closes the window."""
        if self._screen is not None:
            self._pygame.display.quit()
            self._screen = None
