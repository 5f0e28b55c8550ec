# actor-edge: one image for every component (`actor-edge <component> [flags]`).
#
# Stage 1 installs all dependencies and compiles TypeScript; stage 2 carries only the production dependencies,
# the compiled dist/ (without tests) and the protos the gRPC services load at run time.

FROM node:20-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
# Compile, then drop compiled tests and test helpers (testing/ and e2e/ folders; node only: the base image need
# not have find).
RUN npx tsc -p . \
 && node -e "const fs=require('fs');for(const f of fs.readdirSync('dist',{recursive:true}))if(/(^|[/])(testing|e2e)$/.test(f)||/\\.test\\.(js|d\\.ts)(\\.map)?$/.test(f))fs.rmSync('dist/'+f,{recursive:true,force:true})"

FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist ./dist
COPY --from=build /src/proto ./proto
# The base image's unprivileged user (uid 1000); nothing under /app is writable by it.
USER node
# Exec form: node is PID 1 and receives SIGTERM from `docker stop` directly.
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["--help"]
