#!/usr/bin/env bash
# The e2e suite on PostgreSQL against the oldest supported majors: NestJS 11, TypeORM 0.3 (at the
# 0.3.20 floor of the peer range), BullMQ 5, @nestjs/schedule 6, class-validator 0.14.
#
# The lockfile develops on the newest majors. This copies the checkout (its files as git lists them,
# plus the installed node_modules, so native modules are not rebuilt) to a scratch directory,
# installs the oldest set over it there with `npm install --no-save`, prints what it got, and runs
# jest. The checkout itself is left as it was. Extra arguments go to jest.
#   bash test/oldest-stack/run.sh [jest args...]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="${TMPDIR:-/tmp}/geneva-drive-oldest-stack"

OLDEST=(
  '@nestjs/common@^11'
  '@nestjs/core@^11'
  '@nestjs/platform-express@^11'
  '@nestjs/testing@^11'
  '@nestjs/typeorm@^11'
  '@nestjs/bullmq@^11'
  '@nestjs/schedule@^6'
  'typeorm@0.3.20'
  'bullmq@^5'
  'class-validator@^0.14'
)

if [ ! -d "${ROOT}/node_modules" ]; then
  echo "Run npm ci in ${ROOT} first: the copy starts from its node_modules." >&2
  exit 1
fi

rm -rf "${WORK}"
mkdir -p "${WORK}"
(cd "${ROOT}" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "${WORK}")
cp -a "${ROOT}/node_modules" "${WORK}/node_modules"

cd "${WORK}"
# --legacy-peer-deps: TypeORM 0.3.20 names better-sqlite3 up to 9 as an optional peer, and the copy
# has 12 installed (this run is PostgreSQL only; SQLite with better-sqlite3 12 needs TypeORM ≥ 0.3.26).
npm install --no-save --no-audit --no-fund --legacy-peer-deps "${OLDEST[@]}"
node -e 'for (const n of process.argv.slice(1)) console.log(`${n}@${JSON.parse(require("fs").readFileSync(`node_modules/${n}/package.json`, "utf8")).version}`)' \
  @nestjs/common @nestjs/core @nestjs/typeorm @nestjs/bullmq @nestjs/schedule typeorm bullmq class-validator

npx jest --runInBand -c test/oldest-stack/jest.config.js test/e2e "$@"
