"""The apps tests/dist/dist_test.py installs the release's packages into and
drives over HTTP (and the TypeScript file `tsc --strict` checks), as a user
would write them."""

FLASK_APP = """\
import sys

import limits_rl  # registers rl:// with limits
from flask import Flask
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

port, uri = int(sys.argv[1]), sys.argv[2]
app = Flask(__name__)
limiter = Limiter(get_remote_address, app=app, storage_uri=uri, strategy="moving-window",
                  storage_options={"load_functions": True})


@app.route("/")
@limiter.limit("3/minute")
def index():
    return "hello"


app.run(host="127.0.0.1", port=port)
"""


EXPRESS_CJS = """\
const express = require('express');
const { rateLimit } = require('express-rate-limit');
const { createClient } = require('redis');
const { RedisStore } = require('rl-stores');

(async () => {
  const [port, url] = process.argv.slice(2);
  const client = createClient({ url });
  await client.connect();
  const app = express();
  app.use(rateLimit({ windowMs: 60_000, limit: 3,
    store: new RedisStore({ sendCommand: (...args) => client.sendCommand(args) }) }));
  app.get('/', (req, res) => res.send('hello'));
  app.listen(Number(port), '127.0.0.1');
})();
"""


EXPRESS_ESM = """\
import express from 'express';
import { createClient } from 'redis';
import { RateLimiterRl } from 'rl-stores';

const [port, url] = process.argv.slice(2);
const client = createClient({ url });
await client.connect();
const limiter = new RateLimiterRl({ storeClient: client, points: 3, duration: 60 });
await limiter.ready();
const app = express();
app.get('/', async (req, res) => {
  try {
    await limiter.consume(req.ip);
    res.send('hello');
  } catch (rejection) {
    if (rejection instanceof Error) throw rejection;
    res.status(429).send('too many');
  }
});
app.listen(Number(port), '127.0.0.1');
"""


TYPED = """\
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { createClient } from 'redis';
import { RateLimiterRl, RlStore, RlNotLoadedError } from 'rl-stores';

async function main(): Promise<void> {
  const client = createClient();
  await client.connect();
  const limiter = new RateLimiterRl({ storeClient: client, points: 3, duration: 60, limiter: 'slide' });
  const edition: 'module' | 'functions' = await limiter.ready();
  const res = await limiter.consume('k', 1);
  const left: number = res.remainingPoints;
  const store = new RlStore({ sendCommand: (...args: string[]) => client.sendCommand(args) });
  const app = express();
  app.use(rateLimit({ windowMs: 60_000, limit: 3, store }));
  console.log(edition, left, new RlNotLoadedError('x').message);
}

void main();
"""

# A Rack app (config.ru) with rack-attack and rl_throttle, served by thin.
RACK_APP = """\
require "redis"
require "rl/rack_attack"

Rl::RackAttack.redis = Redis.new(url: ENV.fetch("REDIS_URL"))
Rack::Attack.rl_throttle("req/ip", limit: 3, period: 60) { |req| req.ip }
use Rack::Attack
run ->(env) { [200, { "content-type" => "text/plain" }, ["hello\\n"]] }
"""
