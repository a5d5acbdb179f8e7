"""Conformance: legs that check a host against the specification, one requirement id each.

``registry.LEGS`` lists the legs, ``runner.run_conformance(adapters)`` runs them against host
adapters (``in_process.embedded_adapters()`` for the reference host, ``toolcall_spec.http.adapter``
for a host URL), ``report`` renders the result as text, JSON or JUnit XML, and ``mutants`` holds
the broken hosts that prove every host leg can fail. Nothing here is imported by
``import toolcall_spec``.
"""
