FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY config config
COPY annotation annotation
COPY evaluation evaluation
RUN pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu .
COPY . .
RUN SECRET_KEY=build DJANGO_SETTINGS_MODULE=config.settings.production \
    python manage.py collectstatic --noinput
EXPOSE 8000
