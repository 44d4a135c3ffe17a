"""Settings per environment: ``dev`` (manage.py's default), ``test`` (pytest) and ``prod``.

Each module star-imports ``base`` and overrides what differs. Everything that varies between
deployments is read from the environment (see ``.env.example``).
"""
