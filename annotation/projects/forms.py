from django import forms


class MemberForm(forms.Form):
    username = forms.CharField()
    roles = forms.MultipleChoiceField(
        choices=[("admin", "admin"), ("expert", "expert"), ("validator", "validator")],
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
