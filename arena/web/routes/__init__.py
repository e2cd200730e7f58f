"""The web app's routes, one module a concern, each a `router(web)` that returns a FastAPI
APIRouter over the shared `common.Web` (as arena/service/ builds its routers):

    pages.py    the HTML pages of site.PAGES, each at its address (paths.PLACES)
    ladders.py  the ladders' JSON API: ladders, standings, head to head
    bots.py     the bots' JSON API: bots, a bot, its faults with log excerpts, its history
    matches.py  the match list (page and API), a match (API), and full_match for the admin API
    live.py     matches and ladders as they are played: polling and server-sent events
    docs.py     the API's documentation (Swagger UI) and the favicon
    competitions.py  competitions' JSON API and a published one's results archive
    admin.py    the organiser's view (admin key): suspensions and fault rates

Shared declarations (parameters, documented errors, records as plain data) are in common.py.
"""

from . import admin, bots, competitions, docs, ladders, live, matches, pages

# Included in this order: the API's routes keep it in /openapi.json.
MODULES = (pages, docs, ladders, bots, matches, live, competitions, admin)
