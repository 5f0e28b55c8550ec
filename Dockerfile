# actor-edge: one image for every component (`actor-edge <component> [flags]`).
#
# Stage `build` installs all dependencies and compiles TypeScript; the default (last) stage `runtime` carries only
# the production dependencies, the compiled components (no tests, test helpers, benchmark, examples or stack
# launcher) and the protos the gRPC services load at run time. Stage `bench` is the benchmark's own image (the
# compose profile `bench`): the build stage as it is, run as the unprivileged user.
#
# The base image is a build argument (any image with node >= 20 and npm at the usual paths):
#   docker build --build-arg BASE_IMAGE=node:20-slim -t actor-edge:local .
#   docker build --target bench -t actor-edge-bench:local .
# No certificate or key is part of the build (.dockerignore): they are mounted at run time.
ARG BASE_IMAGE=node:20-slim

FROM ${BASE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
# Compile without the tests (tsconfig.image.json), then drop any compiled test or test helper a source pulled in
# (testing/ and e2e/ folders; node only: the base image need not have find).
RUN npx tsc -p tsconfig.image.json \
 && node -e "const fs=require('fs');for(const f of fs.readdirSync('dist',{recursive:true}))if(/(^|[/])(testing|e2e)$/.test(f)||/\\.test\\.(js|d\\.ts)(\\.map)?$/.test(f))fs.rmSync('dist/'+f,{recursive:true,force:true})"
# What the components run (scripts/image-dist.ts): no benchmark, examples, stack launcher or compose checks.
RUN node dist/scripts/image-dist.js dist runtime-dist

FROM build AS bench
ENV NODE_ENV=production
USER node
ENTRYPOINT ["node", "dist/bench/run.js"]

FROM ${BASE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/runtime-dist ./dist
COPY --from=build /src/proto ./proto
# The base image's unprivileged user (uid 1000); nothing under /app is writable by it.
USER node
# Exec form: node is PID 1 and receives SIGTERM from `docker stop` directly.
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["--help"]
