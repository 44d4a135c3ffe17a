import pytest

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_admin_login_page_renders_the_login_form(client):
    response = client.get("/admin/login/")

    assert response.status_code == 200
    assert response.templates[0].name == "admin/login.html"
    content = response.content.decode()
    assert '<form action="/admin/login/" method="post" id="login-form">' in content
    assert 'name="username"' in content
    assert 'name="password"' in content


def test_home_page_lists_the_benchmarks_inside_the_base_template(client):
    response = client.get("/")

    assert response.status_code == 200
    assert [template.name for template in response.templates] == [
        "submissions/home.html",
        "base.html",
    ]
    content = response.content.decode()
    assert "<h1>Podium</h1>" in content
    assert "No benchmark is public yet." in content
