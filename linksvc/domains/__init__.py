"""Custom domains per account: hosts an account proves it owns, on which its links resolve (issue 22)."""
