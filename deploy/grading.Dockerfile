# The grading image: the whole course (grader, reference model, hidden checks, solutions), installed as the
# README's first command does, in a folder every user can read (the sandbox runs learner code as users of
# its own, with this interpreter). Build from the repository's root:
#   docker build -f deploy/grading.Dockerfile -t REGISTRY/mcp-course/grading:TAG .
# Never give this image to learners.
FROM python:3.11-slim
COPY . /opt/mcp-course
RUN python -m venv /opt/mcp-course/.venv \
 && /opt/mcp-course/.venv/bin/pip install --no-cache-dir -e /opt/mcp-course -e '/opt/mcp-course[dask]' \
 && chmod -R a+rX /opt/mcp-course
ENV PATH=/opt/mcp-course/.venv/bin:$PATH
WORKDIR /srv/course
