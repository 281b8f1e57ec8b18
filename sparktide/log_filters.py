"""Logging filters named by ``LOGGING`` (sparktide/settings.py).

An expected condition is logged as one line at the level it deserves, never as
an ERROR with a traceback (docs/reliability.md): a log that cries wolf hides the
errors an operator must see.
"""

import logging


class ClientFaultAsWarning(logging.Filter):
    """A record of the client's doing, logged as one WARNING line without its traceback.

    Django's security loggers report a request naming a host outside ``ALLOWED_HOSTS``
    (``django.security.DisallowedHost``) at ERROR with the exception's traceback. The
    request is answered 400 and nothing on the server went wrong: a scanner, or a proxy
    sending the wrong ``Host``. The line stays, so a misconfigured ``ALLOWED_HOSTS`` is
    still visible, as a warning.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.WARNING:
            record.levelno, record.levelname = (
                logging.WARNING,
                logging.getLevelName(logging.WARNING),
            )
        record.exc_info = None
        record.exc_text = None
        return True
