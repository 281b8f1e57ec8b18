from tests.clients.checkout import use_this_checkouts_client

use_this_checkouts_client()
