# The bot's image. tests/e2e/test_wheel.py, this file's check (no container engine runs where
# the tests run), takes these steps too, with 1's setuptools and 3's lock installed once:
#   1. build the wheel from the source tree:   pip wheel --no-deps --wheel-dir dist .
#   2. make a fresh venv:                       python -m venv /opt/venv
#   3. install the runtime lock alone:          pip install -r requirements-runtime.lock
#   4. install the wheel, no other dependency:  pip install --no-deps dist/cardtable-*.whl
#   5. check the lock satisfies the wheel:      pip check
#   6. run it from outside the source tree:     python -m bot
# Change one, change the other.

FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY bot ./bot
COPY engine ./engine
COPY seeds ./seeds
RUN python -m pip wheel --no-deps --wheel-dir dist .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/venv/bin:$PATH \
    PORT=8080
COPY requirements-runtime.lock /tmp/
COPY --from=build /src/dist/ /tmp/dist/
RUN python -m venv /opt/venv \
    && pip install --no-cache-dir -r /tmp/requirements-runtime.lock \
    && pip install --no-cache-dir --no-deps /tmp/dist/cardtable-*.whl \
    && pip check \
    && rm -rf /tmp/dist /tmp/requirements-runtime.lock \
    && useradd --system --uid 10001 --home-dir /home/bot --create-home bot
USER bot
WORKDIR /home/bot
EXPOSE 8080
# /healthz answers while the process runs (PORT is set above, so polling serves it too).
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('PORT', '8080') + '/healthz', timeout=2)"]
# SIGTERM (docker stop) lets it finish what it took within SHUTDOWN_GRACE (10 s by
# default), plus up to 3 s for the HTTP server's last requests. docker stop kills after
# 10 s: stop it with `docker stop -t 15` (compose.yaml sets stop_grace_period: 15s).
STOPSIGNAL SIGTERM
CMD ["python", "-m", "bot"]
