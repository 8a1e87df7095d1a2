"""Layer 5: one function per button or command; each checks, changes the table through the
service, and answers.
"""
