"""Helpers shared by the tests: strategies, checks, documents, servers, mutant hosts."""
