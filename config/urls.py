from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.authtoken.views import ObtainAuthToken

from annotation.urls import api_urls, page_urls
from config.auth import TokenRequestSerializer
from evaluation import urls as evaluation_urls

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "api/auth/token/",
        ObtainAuthToken.as_view(serializer_class=TokenRequestSerializer),
        name="api-token",
    ),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/", include(api_urls)),
    path("api/", include(evaluation_urls.api_urls)),
    path("", include(page_urls)),
    path("", include(evaluation_urls.page_urls)),
]
