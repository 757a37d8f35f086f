# The API server, compiled ahead of time (scripts/build.mjs, esbuild) so a start loads JavaScript only.
# Node 24 LTS (Node 20 is past its end of life; the code still runs on 20 for machines that have it).
FROM node:24-bookworm-slim

ENV NODE_ENV=production
WORKDIR /app

COPY package*.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY . .
RUN node scripts/build.mjs && mkdir -p /data && chown node:node /data

USER node
ENV PORT=8080 \
    HOST=0.0.0.0 \
    DATA_DIR=/data \
    AUDIOSOCKET_PORT=9092
EXPOSE 8080 9092

# node (not npm/npx) is the main process, so SIGTERM reaches the server itself.
CMD ["node", "dist/src/main.js"]
