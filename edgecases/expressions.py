"""Arithmetic expressions of ULP and absolute bounds (``3 + (1.5 * n) + (0.5 * (n - 1))``,
``floor(fabs(2 * x))``) as written in the OpenCL C 3.0 §7.4 tables and kept in
``data/ulp_bounds.toml``: parsed safely (``ast``, a whitelist of nodes) and evaluated with
numpy over whole batches.
"""
from __future__ import annotations

import ast

import numpy as np

__all__ = ["Expr", "ULP_NAMES", "ABSOLUTE_NAMES"]


_BINOPS = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide}
_CALLS = {"floor": np.floor, "fabs": np.abs}
#: Names an expression may use, per value kind.
ULP_NAMES = ("n", "x")
ABSOLUTE_NAMES = ("n", "max", "EPS")


class Expr:
    """An arithmetic expression of a bound (``3 + (1.5 * n) + (0.5 * (n - 1))``).

    Only numbers, ``+ - * /``, unary minus, parentheses, ``floor(.)``, ``fabs(.)`` and the
    names in ``allowed`` are accepted; anything else raises ValueError at construction.
    Evaluation is vectorized: names map to float64 arrays of shape (n,) or scalars.
    """

    __slots__ = ("text", "names", "_tree")

    def __init__(self, text: str, allowed: tuple[str, ...]):
        self.text = text.strip()
        try:
            tree = ast.parse(self.text, mode="eval")
        except SyntaxError as exc:
            raise ValueError(f"expression {text!r} does not parse ({exc.msg})") from None
        names: set = set()
        self._check(tree.body, allowed, names)
        self._tree = tree.body
        self.names = frozenset(names)

    def _check(self, node, allowed, names) -> None:
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            self._check(node.left, allowed, names)
            self._check(node.right, allowed, names)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            self._check(node.operand, allowed, names)
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
            pass
        elif isinstance(node, ast.Name):
            if node.id not in allowed:
                raise ValueError(f"expression {self.text!r}: name {node.id!r} is not allowed "
                                 f"here; use {', '.join(allowed)}")
            names.add(node.id)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in _CALLS and len(node.args) == 1 and not node.keywords):
            self._check(node.args[0], allowed, names)
        else:
            what = type(node.op).__name__ if isinstance(node, (ast.BinOp, ast.UnaryOp)) \
                else type(node).__name__
            raise ValueError(f"expression {self.text!r}: {what} is not allowed; use numbers, "
                             f"+ - * /, parentheses, floor(), fabs() and {', '.join(allowed)}")

    def __call__(self, env: dict):
        """The value with ``env`` binding every name of ``self.names`` (float64 result)."""
        with np.errstate(all="ignore"):
            return self._eval(self._tree, env)

    def _eval(self, node, env):
        if isinstance(node, ast.BinOp):
            return _BINOPS[type(node.op)](self._eval(node.left, env), self._eval(node.right, env))
        if isinstance(node, ast.UnaryOp):
            v = self._eval(node.operand, env)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.Constant):
            return np.float64(node.value)
        if isinstance(node, ast.Name):
            return env[node.id]
        return _CALLS[node.func.id](self._eval(node.args[0], env))

    def __repr__(self) -> str:
        return f"Expr({self.text!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Expr) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)
