"""Users: the custom user model and, later, sign-in through GitHub."""
