"""The reference host over HTTP (the OpenWOP v2 surface) and the HTTP conformance adapter.

Nothing here is imported by ``import toolcall_spec``: the server side needs the ``http`` extra
(starlette, uvicorn, httpx), the adapter only httpx. Modules:

- ``app``: the ASGI application (``create_app``), routes and handlers;
- ``runs``: the run registry (asynchronous execution, limits, eviction);
- ``suite_refs``: resolving ``evalSuiteRef`` (fixture ids, ``data:`` URIs, an allowed directory);
- ``auth``: the bearer-token middleware; ``errors``: the flat error envelope;
- ``discovery``: the discovery document, its ETag and version negotiation;
- ``server``: running the app on uvicorn; ``adapter``: ``HttpAdapter`` for conformance.
"""
