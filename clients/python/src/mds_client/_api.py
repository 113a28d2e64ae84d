"""The methods both clients share, each declared once, as a :class:`Route` to
the builder of its call (:mod:`._calls`) or of its job of several calls
(:mod:`._pages`), whose signature and docstring it takes. On a :class:`Client`
a route returns its result; on an :class:`AsyncClient`, a coroutine of it."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar, overload

from . import _calls, _pages
from ._calls import Call
from ._core import TR, ClientBase
from ._pages import Job

if TYPE_CHECKING:
    import httpx

A = ParamSpec("A")
R = TypeVar("R")


class Route(Generic[A, R]):
    """A method of both clients: ``client.name(...)`` runs what ``build(...)``
    makes (a :class:`Call`, or a :data:`Job` of several) with the client's
    transport, retries and errors."""

    def __init__(self, build: Callable[A, Call[R] | Job[R]]) -> None:
        self._build = build
        self._name = build.__name__
        self.__doc__ = build.__doc__
        self.__signature__ = _unwrapped(inspect.signature(build))

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"<route {self._name}{self.__signature__}>"

    def __call__(self, client: Api[Any], /, *args: A.args, **kwargs: A.kwargs) -> Any:
        """The route called on the class: ``Client.company(client, isin)``."""
        return client._method(self._build)(*args, **kwargs)

    @overload
    def __get__(self, client: None, owner: type[Any]) -> Route[A, R]: ...
    @overload
    def __get__(self, client: Api[httpx.BaseTransport], owner: type[Any]) -> Callable[A, R]: ...
    @overload
    def __get__(
        self, client: Api[httpx.AsyncBaseTransport], owner: type[Any]
    ) -> Callable[A, Coroutine[Any, Any, R]]: ...
    def __get__(self, client: Api[Any] | None, owner: type[Any]) -> Any:
        if client is None:
            return self
        method = client._method(self._build)
        functools.update_wrapper(method, self._build)
        method.__name__ = self._name
        method.__qualname__ = f"{owner.__qualname__}.{self._name}"
        method.__signature__ = self.__signature__  # type: ignore[attr-defined]
        return method


def _unwrapped(signature: inspect.Signature) -> inspect.Signature:
    """A builder's signature, returning what its call or job returns."""
    made = re.fullmatch(r"(?:Call|Job)\[(.*)\]", str(signature.return_annotation))
    return signature.replace(return_annotation=made[1] if made else signature.empty)


class Api(ClientBase[TR]):
    """What :class:`Client` and :class:`AsyncClient` offer alike: their routes.
    Each client says in ``_method`` how it runs one."""

    def _method(self, build: Callable[..., Call[Any] | Job[Any]]) -> Callable[..., Any]:
        """The bound method of a route: runs what ``build(...)`` makes."""
        raise NotImplementedError

    # --- single resources -------------------------------------------------

    company = Route(_calls.company)
    history = Route(_calls.history)
    company_actions = Route(_calls.company_actions)
    company_prices = Route(_calls.company_prices)
    symbol = Route(_calls.symbol)
    article = Route(_calls.article)
    usage = Route(_calls.usage)
    usage_daily = Route(_calls.usage_daily)

    # --- the change feed --------------------------------------------------

    changes = Route(_calls.changes)
    sync = Route(_pages.sync)
    sync_frame = Route(_pages.sync_frame)

    # --- webhook endpoints (contract 11.2) ----------------------------------

    create_webhook = Route(_calls.webhook_create)
    webhooks = Route(_calls.webhook_list)
    webhook = Route(_calls.webhook_get)
    update_webhook = Route(_calls.webhook_update)
    delete_webhook = Route(_calls.webhook_delete)
    rotate_webhook_secret = Route(_calls.webhook_rotate)
    test_webhook = Route(_calls.webhook_test)
    webhook_attempts = Route(_calls.webhook_attempts)
    replay_webhook = Route(_calls.webhook_replay)
