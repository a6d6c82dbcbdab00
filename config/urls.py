from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.authtoken.views import ObtainAuthToken

from annotation.urls import api_urls, page_urls
from config import sso
from config.auth import AnonThrottle, TokenRequestSerializer, token_page
from config.edge import with_inline_styles
from evaluation import urls as evaluation_urls

handler400 = "config.edge.bad_request"
handler403 = "config.edge.permission_denied"
handler404 = "config.edge.page_not_found"
handler500 = "config.edge.server_error"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", sso.LoginPage.as_view(), name="login"),
    path("accounts/sso/", sso.SignInStart.as_view(), name="sso-start"),
    path("accounts/sso/callback/", sso.SignInEnd.as_view(), name="sso-callback"),
    path("accounts/logout/", sso.SignOut.as_view(), name="logout"),
    # The one-time link of an invitation (annotation/projects/services/invites.py).
    path(
        "accounts/set-password/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(
            template_name="registration/password_set.html", success_url="/accounts/password-set/"
        ),
        name="password-set",
    ),
    path(
        "accounts/password-set/",
        auth_views.PasswordResetCompleteView.as_view(
            template_name="registration/password_set_done.html"
        ),
        name="password-set-done",
    ),
    path("accounts/api-token/", token_page, name="api-token-page"),
    path(
        "api/auth/token/",
        ObtainAuthToken.as_view(
            serializer_class=TokenRequestSerializer, throttle_classes=[AnonThrottle]
        ),
        name="api-token",
    ),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path(
        "api/docs/",
        with_inline_styles(SpectacularSwaggerSplitView.as_view(url_name="api-schema")),
        name="api-docs",
    ),
    path("api/", include(api_urls)),
    path("api/", include(evaluation_urls.api_urls)),
    path("", include(page_urls)),
    path("", include(evaluation_urls.page_urls)),
]
