"""Layer 5: one function per button or command.

Each checks, changes the table through the service, and answers; none decides a rule.
"""
