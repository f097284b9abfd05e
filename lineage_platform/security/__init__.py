"""Security features over lineage: fine-grained permission extraction, policy checks and dynamic masking.

See README.md in this package for the flow, the policy file format and what each masking mode stops.
"""
